"""The memory browser: a lazy table over the store, filters, the detail editor."""
