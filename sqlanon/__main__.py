from sqlanon.cli.app import main

main()
