"""Render helpers: Streamlit only, no I/O, no parsing."""
