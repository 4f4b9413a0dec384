"""Default durations, named so signatures read as their values (`timeout: Duration = ONE_MINUTE`).

`Duration` is immutable, so one instance can safely be the default of many props.
"""

from __future__ import annotations

from aws_cdk import Duration

TEN_SECONDS = Duration.seconds(10)
ONE_MINUTE = Duration.minutes(1)
FIVE_MINUTES = Duration.minutes(5)
SIX_MINUTES = Duration.minutes(6)
ONE_DAY = Duration.days(1)
FOUR_DAYS = Duration.days(4)
FOURTEEN_DAYS = Duration.days(14)
THIRTY_DAYS = Duration.days(30)
NINETY_DAYS = Duration.days(90)
FOUR_HUNDRED_DAYS = Duration.days(400)
