"""The filing kit: root cause, candidate fixes, the upstream patch and the issue body's material."""
