"""The four phases of a run: orient → summarize → attach → update."""
