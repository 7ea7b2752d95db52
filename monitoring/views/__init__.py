"""Pages of the monitoring app."""
