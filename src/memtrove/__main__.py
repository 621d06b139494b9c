from memtrove.cli import main

main()
