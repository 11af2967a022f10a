"""`compare bench`: training throughput, prediction speed and the app under load (bench.json)."""
