"""What judges reports: the ratchet audit, the shape search, the fix loop."""
