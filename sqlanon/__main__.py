from sqlanon.cli.launch import main

main()
