"""What the tests share: builders of books, projects, windows and voices, and the fixtures plugin."""
