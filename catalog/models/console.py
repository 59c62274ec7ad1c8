"""Per-person console settings."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class UserPreference(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="console_preference")
    language = models.CharField(max_length=10, choices=settings.LANGUAGES)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language}"
