"""What many test folders share: the AWS resources on the emulator, API Gateway events, a parked thread."""
