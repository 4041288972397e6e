"""clusterctl: provisioning and fabric verification for multi-node GPU training clusters."""

__version__ = "0.1.0"
