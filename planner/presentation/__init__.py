"""What a team lead reads first: the plan's verdict, numbers in the reader's locale."""
