"""The use cases: what each command does, once, for the CLI, the pytest plugin and zeinspect.triton.

Above the judges and below the front-ends.  A command opens one `Session` (app.session:
compilers, cache, executor), calls one use case, and gets a typed result with its `Outcome`
(exit code, incidents, findings) to render with a writer of zeinspect.formats.
"""
