"""The Streamlit app: a router (app.py), thin views, render components, one cached data layer."""
