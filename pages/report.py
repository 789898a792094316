"""report page: placeholder until the core module lands."""

import streamlit as st

st.title("report")
st.info("This page is being built.")
