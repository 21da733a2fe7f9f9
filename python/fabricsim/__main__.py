"""``python -m fabricsim`` runs the CLI."""

from .cli import main

main()
