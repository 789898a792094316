"""What people read: charts, the report and the slides."""
