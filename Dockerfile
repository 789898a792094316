# Luskin dashboard: a slim Python 3.11 image serving the Streamlit app on port 8501.
# Build: docker build -t luskin .    Run: docker run --rm -p 8501:8501 luskin
# Port 8501 is nginx (deploy/nginx.conf): it sets the headers Streamlit cannot (Content-Security-Policy
# with frame-ancestors 'none', X-Frame-Options) and answers 404 for /_stcore/metrics. Streamlit itself
# listens on 127.0.0.1:8502 inside the container only (deploy/start.sh starts both).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Debian's nginx, the reverse proxy in front of Streamlit. Not pinned to a Debian revision: the base
# image moves with Debian's security updates, and a pin would break the build at the next one.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, so that a code change does not reinstall them; then an unprivileged
# user (uid 10001) to run the app. The app's files stay owned by root: read-only for it.
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin luskin

# The app's files, then Luskin itself as a package (setup.py copies the samples and the
# dashboard into it), so that the `luskin` command works in the container too.
COPY . .
RUN pip install --no-cache-dir --no-deps . \
    && rm -rf build ./*.egg-info

USER 10001
EXPOSE 8501

# python:3.11-slim has no curl: ask Streamlit's health endpoint, through the proxy, with the standard library.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() == b'ok' else 1)"]

CMD ["/app/deploy/start.sh"]
