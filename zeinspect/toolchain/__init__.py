"""Finding, identifying and fetching compilers; targets and IP versions; option spellings."""
