"""What turns an input into kernel reports: AOT compiles (ocloc), existing binaries, Level Zero."""
