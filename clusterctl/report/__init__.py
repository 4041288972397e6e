"""Reports that leave clusterctl for other systems: Prometheus textfiles and JUnit XML (issue 26)."""
