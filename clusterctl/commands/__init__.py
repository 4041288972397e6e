"""CLI command modules; each one registers its commands on ``clusterctl.app.app``."""
