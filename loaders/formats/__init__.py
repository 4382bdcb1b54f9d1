"""Parsers for each upstream file format: records in, schema objects out. No I/O policy here."""
