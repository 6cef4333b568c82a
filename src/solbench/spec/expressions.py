"""A small interpreter for axis expressions and constraints, so that no file is ever `eval`-ed.

Axis expressions (``attention_head_dim // 2``) use integer arithmetic over axis names.
Constraints (``len_indptr == batch_size + 1``, ``num_kv_indices == kv_indptr[-1].item()``)
add comparisons, boolean logic, constant subscripts and a few read-only tensor methods.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from solbench.errors import SolbenchError


class ExpressionError(SolbenchError, ValueError):
    """The expression uses syntax or names outside the allowed subset."""


_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_FUNCTIONS = {
    "min": min,
    "max": max,
    "abs": abs,
    "len": len,
    "ceil": math.ceil,
    "floor": math.floor,
    "cdiv": lambda a, b: -(-a // b),
}
# Methods a constraint may call on a tensor input; all are read-only and return numbers.
_TENSOR_METHODS = {"item", "numel", "sum", "min", "max", "dim", "size"}
_TENSOR_ATTRIBUTES = {"shape", "ndim"}


@lru_cache(maxsize=1024)
def parse_expression(source: str) -> ast.expr:
    """Parse once; raises ExpressionError for syntax errors."""
    try:
        return ast.parse(source.strip(), mode="eval").body
    except SyntaxError as error:
        raise ExpressionError(f"not a valid expression: {error.msg}") from None


def names_in(source: str) -> set[str]:
    """Free names an expression reads (excluding allowed function names)."""
    tree = parse_expression(source)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called


def evaluate(source: str, names: Mapping[str, Any]) -> Any:
    """Evaluate `source` over `names`; raises ExpressionError on anything outside the subset."""
    return _Interpreter(names).visit(parse_expression(source))


def evaluate_axis_expression(source: str, axes: Mapping[str, int]) -> int:
    """An axis expression must produce a non-negative integer."""
    value = evaluate(source, axes)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExpressionError(f"evaluates to {value!r}, not an integer")
    if value < 0:
        raise ExpressionError(f"evaluates to {value}, a negative size")
    return value


class _Interpreter(ast.NodeVisitor):
    def __init__(self, names: Mapping[str, Any]):
        self.names = names

    def generic_visit(self, node: ast.AST) -> Any:
        raise ExpressionError(f"'{type(node).__name__}' is not allowed in an expression")

    def visit_Constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, (int, float, bool)):
            return node.value
        raise ExpressionError(f"constant {node.value!r} is not a number")

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id not in self.names:
            known = ", ".join(sorted(self.names)) or "none"
            raise ExpressionError(f"unknown name '{node.id}' (known: {known})")
        return self.names[node.id]

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        op = _BINARY.get(type(node.op))
        if op is None:
            raise ExpressionError(f"operator '{type(node.op).__name__}' is not allowed")
        left, right = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ExpressionError("exponent too large")
        try:
            return op(left, right)
        except ZeroDivisionError:
            raise ExpressionError("division by zero") from None

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        op = _UNARY.get(type(node.op))
        if op is None:
            raise ExpressionError(f"operator '{type(node.op).__name__}' is not allowed")
        return op(self.visit(node.operand))

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [bool(self.visit(v)) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)

    def visit_Compare(self, node: ast.Compare) -> bool:
        left = self.visit(node.left)
        for op_node, comparator in zip(node.ops, node.comparators):
            op = _COMPARE.get(type(op_node))
            if op is None:
                raise ExpressionError(f"comparison '{type(op_node).__name__}' is not allowed")
            right = self.visit(comparator)
            if not bool(op(left, right)):
                return False
            left = right
        return True

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        index = self.visit(node.slice)
        if not isinstance(index, int):
            raise ExpressionError("only integer subscripts are allowed")
        return self.visit(node.value)[index]

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr not in _TENSOR_ATTRIBUTES:
            raise ExpressionError(f"attribute '.{node.attr}' is not allowed")
        return getattr(self.visit(node.value), node.attr)

    def visit_Call(self, node: ast.Call) -> Any:
        if node.keywords:
            raise ExpressionError("keyword arguments are not allowed")
        if isinstance(node.func, ast.Name):
            function = _FUNCTIONS.get(node.func.id)
            if function is None:
                raise ExpressionError(f"function '{node.func.id}' is not allowed (allowed: {', '.join(_FUNCTIONS)})")
            return function(*[self.visit(a) for a in node.args])
        if isinstance(node.func, ast.Attribute) and node.func.attr in _TENSOR_METHODS:
            args = [self.visit(a) for a in node.args]
            result = getattr(self.visit(node.func.value), node.func.attr)(*args)
            return result.item() if hasattr(result, "item") and node.func.attr != "item" else result
        raise ExpressionError(
            "call not allowed: only min/max/abs/len/ceil/floor/cdiv and tensor "
            ".item()/.numel()/.sum()/.min()/.max()/.dim()/.size()"
        )
