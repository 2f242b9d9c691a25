"""In-product feedback: users submit and follow it, operators answer from the CLI."""
