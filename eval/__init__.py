"""planverify package."""
