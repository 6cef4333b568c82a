from solbench.cli.app import main

main()
