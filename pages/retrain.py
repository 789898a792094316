"""retrain page: placeholder until the core module lands."""

import streamlit as st

st.title("retrain")
st.info("This page is being built.")
