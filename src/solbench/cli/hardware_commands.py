"""`solbench hw list | show ID | probe`: the hardware database and the local CPU probe."""

from __future__ import annotations

import json

import typer

app = typer.Typer(no_args_is_help=True, help="Hardware specs used for T_SOL.")


@app.command("list")
def list_hardware(json_output: bool = typer.Option(False, "--json", help="Print JSON only.")) -> None:
    """List the hardware ids T_SOL can use (and `local` once probed)."""
    from rich.console import Console
    from rich.table import Table

    from solbench.hardware import device_files, resolve
    from solbench.hardware.local import local_probe_path

    specs = [resolve(device) for device in device_files().values()]
    if json_output:
        print(json.dumps([{"id": s.id, "name": s.name, "aliases": list(s.aliases)} for s in specs]))
        return
    table = Table(title="hardware", title_justify="left")
    # Ids are what users type: never cut or wrapped; the other columns wrap on a narrow terminal.
    table.add_column("id", no_wrap=True, min_width=max(len(s.id) for s in specs))
    for column in ("name", "bf16 TFLOP/s", "fp8 TFLOP/s", "fp32 TFLOP/s", "memory TB/s"):
        table.add_column(column)
    table.add_column("aliases", overflow="fold")
    for spec in specs:
        table.add_row(
            spec.id,
            spec.name,
            f"{spec.matrix_rate('bfloat16')[0] / 1e12:,.0f}",
            f"{spec.matrix_rate('float8')[0] / 1e12:,.0f}",
            f"{spec.vector_flops['float32'] / 1e12:,.1f}",
            f"{spec.memory_bandwidth_bytes_per_s / 1e12:.2f}",
            ", ".join(spec.aliases),
        )
    probed = "probed" if local_probe_path().exists() else "not probed yet: run `solbench hw probe`"
    table.add_row("local", f"this machine's CPU ({probed})", "", "", "", "", "")
    Console().print(table)


@app.command("show")
def show_hardware(
    hardware_id: str = typer.Argument(..., help="An id or alias, any case; or `local`."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Every figure of one device, with its source."""
    from dataclasses import asdict

    from rich.console import Console
    from rich.table import Table

    from solbench.hardware import lookup

    spec = lookup(hardware_id)
    if json_output:
        print(json.dumps(asdict(spec)))
        return
    table = Table(title=f"{spec.id}: {spec.name}", title_justify="left")
    for column in ("figure", "value", "source"):
        table.add_column(column, overflow="fold")
    rows = [
        (
            "memory bandwidth",
            f"{spec.memory_bandwidth_bytes_per_s / 1e12:.3f} TB/s",
            spec.sources.get("memory_bandwidth_bytes_per_s", ""),
        )
    ]
    rows += [
        (f"matrix {p}", f"{v / 1e12:,.1f} TFLOP/s", spec.sources.get(f"tensor.{p}", ""))
        for p, v in spec.tensor_flops.items()
    ]
    rows += [
        (f"vector {p}", f"{v / 1e12:,.2f} TFLOP/s", spec.sources.get(f"cuda_core.{p}", ""))
        for p, v in spec.vector_flops.items()
    ]
    rows.append(("special functions", f"{spec.special_ops_per_s / 1e12:,.2f} Tops/s", spec.sources.get("special", "")))
    if spec.cache_bytes:
        rows.append(("last-level cache", f"{spec.cache_bytes / 2**20:.0f} MiB", spec.sources.get("l2_bytes", "OS")))
    for row in rows:
        table.add_row(*row)
    Console().print(table)


@app.command("probe")
def probe_hardware() -> None:
    """Measure this machine's CPU (bandwidth, matmul FLOP/s per dtype, caches) for `--hardware local`."""
    from rich.console import Console

    from solbench.hardware.local import check_probe, save_probe, spec_from_probe
    from solbench.hardware.probe import probe

    errors = Console(stderr=True)
    result = probe(lambda message: errors.print(f"probing {message} ...", highlight=False))
    check_probe(result)  # beyond the CPU's instruction-set peak: refused, not stored
    path = save_probe(result)
    spec = spec_from_probe(result)
    print(
        f"{spec.name}: {spec.memory_bandwidth_bytes_per_s / 1e9:.1f} GB/s, "
        + ", ".join(f"{d} {r / 1e9:.0f} GFLOP/s" for d, r in result.matmul_flops.items())
        + f"; saved to {path} ({result.seconds:.0f} s)"
    )
