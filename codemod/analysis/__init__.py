"""Per-file facts and the cross-file class index (no torch, no imports of analysed code)."""
