from overlap_check.cli import main

main()
