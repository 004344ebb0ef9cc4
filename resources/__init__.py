"""Data files shipped with Ambry (tool manifest, skill text, icons, stylesheet)."""
