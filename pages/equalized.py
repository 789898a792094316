"""equalized page: placeholder until the core module lands."""

import streamlit as st

st.title("equalized")
st.info("This page is being built.")
