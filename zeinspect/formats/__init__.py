"""Output formats: pure functions from reports and verdicts to text."""
