"""`dream eval`: compile benchmark conversations into Brains with Dream and measure the packets."""
