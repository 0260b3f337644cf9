"""hdp stage."""
