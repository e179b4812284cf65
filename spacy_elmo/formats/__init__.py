"""Converters for foreign biLM checkpoint formats."""
