"""The time a question names: "in March", "in 2024", "last week", "yesterday", "before the
migration", "after the launch", "since May", "two weeks before August 11, 2023".

:func:`time_constraint` reads one constraint from the wording (regular expressions only:
it runs on every ``query``, so it costs microseconds and loads nothing). A constraint is a
window on effective time (``authored_at``, else ``modified_at``) with a direction:

- ``within``: inside ``[start, end]`` ("in March 2024", "last week", "on 2024-05-02");
- ``before``: up to ``end`` ("before April 10, 2023", "until 2022");
- ``after``: from ``start`` on ("since May", "after 2021").

Two kinds are finished later, by :mod:`memtrove.retrieval.temporal_channels`, because they
depend on the vault: a month without a year ("in June") is the latest June that dates any
document (not June of this year), and an event ("before the migration", "after the
accident") is dated by the best keyword match for its words. ``anchor`` is the time the
question refers to, the point proximity is measured from.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from memtrove.patterns import LazyPattern
from memtrove.text import STOPWORDS

__all__ = ["MONTHS", "TimeConstraint", "month_window", "time_constraint"]


class TimeConstraint(NamedTuple):
    """A window on effective time a question names (see the module docstring).

    ``start``/``end`` are inclusive UTC moments (None: open on that side). ``month`` is set
    (and the window empty) for a month without a year; ``event`` for "before the X".
    ``phrase`` is the wording it was read from.
    """

    direction: str  # within | before | after
    phrase: str
    start: datetime | None = None
    end: datetime | None = None
    anchor: datetime | None = None
    month: int | None = None
    event: str | None = None


MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "few": 3,
    "couple of": 2,
}
_MONTH = r"(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"((?:19|20)\d{2})"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_COUNT = r"(\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + r")"
_UNIT = r"(day|week|month|year)s?"
_BEFORE = r"before|until|till|by|prior\s+to|up\s+to"
_AFTER = r"after|since|from|following"
_DIRECTION = rf"({_BEFORE}|{_AFTER}|in|during|on|of|around|throughout)"

# A full date: ISO, "August 11, 2023", "11 August 2023", "11th of August, 2023".
_DATE = (
    rf"(?:(\d{{4}})-(\d{{2}})-(\d{{2}})|{_MONTH}\s+{_DAY},?\s+{_YEAR}"
    rf"|{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR})"
)
_OFFSET_DATE = LazyPattern(
    rf"\b(?:the\s+)?(?:{_COUNT}\s+)?{_UNIT}\s+({_BEFORE}|{_AFTER})\s+{_DATE}", re.IGNORECASE
)
_DIRECTED_DATE = LazyPattern(rf"\b(?:{_DIRECTION}\s+)?{_DATE}", re.IGNORECASE)
_PART = r"(?:(?:the\s+)?(?:beginning|start|end|middle|first\s+half|second\s+half)\s+of\s+)?"
_MONTH_YEAR = LazyPattern(rf"\b(?:{_DIRECTION}\s+)?{_PART}{_MONTH}\s*,?\s+{_YEAR}\b", re.I)
_MONTH_ALONE = LazyPattern(rf"\b{_DIRECTION}\s+{_PART}{_MONTH}(?!\s*\d)\b", re.IGNORECASE)
_YEAR_ALONE = LazyPattern(rf"\b{_DIRECTION}\s+(?:the\s+year\s+)?{_YEAR}\b(?!-)", re.IGNORECASE)
_AGO = LazyPattern(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", re.IGNORECASE)
_PAST_SPAN = LazyPattern(rf"\b(?:last|past|previous)\s+{_COUNT}\s+{_UNIT}\b", re.IGNORECASE)
_RELATIVE = LazyPattern(
    r"\b(the\s+day\s+before\s+yesterday|yesterday|today|tonight|this\s+morning|last\s+night"
    r"|(?:last|this|past|previous)\s+(?:weekend|week|month|year))\b",
    re.IGNORECASE,
)
# "before the migration", "after our launch", "since the outage"
_EVENT = LazyPattern(
    r"\b(before|until|till|prior\s+to|after|since|following)\s+(?:the|our|my|his|her|their|its|that|this)\s+"
    r"((?:[\w'-]+\s*){1,6})",
    re.IGNORECASE,
)
_EVENT_STOP = STOPWORDS | {"went", "was", "happened", "started", "ended", "began", "last", "first"}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def _number(text: str | None) -> int:
    if not text:
        return 1
    lowered = " ".join(text.lower().split())
    return int(lowered) if lowered.isdigit() else _NUMBERS.get(lowered, 1)


def _day_start(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _day_end(day: date) -> datetime:
    return _day_start(day) + timedelta(days=1, seconds=-1)


def month_window(year: int, month: int, part: str = "") -> tuple[datetime, datetime]:
    """The first and last moment of a month (or of the named part of it)."""
    first = date(year, month, 1)
    following = date(year + (month == 12), month % 12 + 1, 1)
    last = following - timedelta(days=1)
    part = " ".join(part.lower().split())
    if part.startswith(("the beginning", "beginning", "the start", "start", "the first", "first")):
        last = date(year, month, 15)
    elif part.startswith(("the end", "end", "the second", "second")):
        first = date(year, month, 16)
    elif part.startswith(("the middle", "middle")):
        first, last = date(year, month, 8), date(year, month, 23)
    return _day_start(first), _day_end(last)


def _directed(
    word: str | None, start: datetime, end: datetime, phrase: str, anchor: datetime | None = None
) -> TimeConstraint:
    """A window read with the preposition before it: "before X" ends where X starts,
    "after X" starts where X ends, "since X" where X starts."""
    word = " ".join((word or "").lower().split())
    if re.fullmatch(_BEFORE, word):
        if word in ("before", "prior to"):  # "by", "until", "up to" include X itself
            return TimeConstraint("before", phrase, None, start - timedelta(seconds=1), start)
        return TimeConstraint("before", phrase, None, end, end)
    if word in ("since", "from"):
        return TimeConstraint("after", phrase, start, None, start)
    if re.fullmatch(_AFTER, word):
        return TimeConstraint("after", phrase, end + timedelta(seconds=1), None, end)
    return TimeConstraint("within", phrase, start, end, anchor or start + (end - start) / 2)


def _full_date(groups: tuple[str | None, ...]) -> date | None:
    """The date of one :data:`_DATE` match's nine groups (ISO, month-day-year, day-month-year)."""
    try:
        if groups[0]:
            return date(int(groups[0]), int(groups[1] or 0), int(groups[2] or 0))
        if groups[3]:
            return date(int(groups[5] or 0), MONTHS[groups[3].lower()], int(groups[4] or 0))
        if groups[7]:
            return date(int(groups[8] or 0), MONTHS[groups[7].lower()], int(groups[6] or 0))
    except (KeyError, ValueError):
        return None
    return None


def _shift(day: date, count: int, unit: str, sign: int) -> date:
    return day + timedelta(days=sign * count * _UNIT_DAYS[unit.lower()])


def time_constraint(query: str, now: datetime) -> TimeConstraint | None:
    """The time window ``query`` names, or None (the common case: most questions name none).

    Relative wording ("yesterday", "last week", "3 days ago") counts from ``now``."""
    if not any(character.isdigit() for character in query) and _cheap_miss(query):
        return None
    today = now.astimezone(UTC).date() if now.tzinfo else now.date()
    match = _OFFSET_DATE.search(query)
    if match:
        day = _full_date(match.groups()[3:])
        if day is not None:
            count, unit = _number(match[1]), match[2]
            sign = -1 if re.fullmatch(_BEFORE, match[3].lower()) else 1
            target = _shift(day, count, unit, sign)
            half = timedelta(days=max(1, _UNIT_DAYS[unit.lower()] // 2))
            if match[1] is None and match[0].lower().lstrip().startswith("the"):
                # "the week before August 3": the whole week up to that day
                low, high = sorted((_day_start(target), _day_start(day) - timedelta(seconds=1)))
                return TimeConstraint("within", match[0], low, high, _day_start(target))
            anchor = _day_start(target)
            return TimeConstraint("within", match[0], anchor - half, anchor + half, anchor)
    match = _DIRECTED_DATE.search(query)
    if match:
        day = _full_date(match.groups()[1:])
        if day is not None:
            return _directed(match[1], _day_start(day), _day_end(day), match[0])
    match = _MONTH_YEAR.search(query)
    if match:
        part = _part_of(match[0])
        start, end = month_window(int(match[3]), MONTHS[match[2].lower()], part)
        return _directed(match[1], start, end, match[0])
    match = _YEAR_ALONE.search(query)
    if match:
        year = int(match[2])
        return _directed(
            match[1], _day_start(date(year, 1, 1)), _day_end(date(year, 12, 31)), match[0]
        )
    match = _MONTH_ALONE.search(query)
    if match and not (match[2].lower() == "may" and "May" not in match[0]):
        # "in May" written lower-case is more often the verb ("what may in june...")
        word = match[1].lower()
        direction = "before" if re.fullmatch(_BEFORE, word) else "within"
        if re.fullmatch(_AFTER, word):
            direction = "after"
        return TimeConstraint(direction, match[0], month=MONTHS[match[2].lower()])
    relative = _relative(query, today)
    if relative is not None:
        return relative
    return _event(query)


_CHEAP = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|yesterday|today|tonight|morning"
    r"|night|weekend|week|month|year|ago|before|after|since|until|till|prior|following|up)",
    re.IGNORECASE,
)


def _cheap_miss(query: str) -> bool:
    """No digit and none of the words every pattern needs: the usual question, decided by
    one scan."""
    return _CHEAP.search(query) is None


def _part_of(phrase: str) -> str:
    found = re.search(r"(beginning|start|end|middle|first\s+half|second\s+half)\s+of", phrase, re.I)
    return found[1] if found else ""


def _relative(query: str, today: date) -> TimeConstraint | None:
    match = _AGO.search(query)
    if match:
        count, unit = _number(match[1]), match[2].lower()
        target = _shift(today, count, unit, -1)
        half = timedelta(days=max(1, _UNIT_DAYS[unit] * count // 4))
        anchor = _day_start(target)
        return TimeConstraint("within", match[0], anchor - half, _day_end(target) + half, anchor)
    match = _PAST_SPAN.search(query)
    if match:
        start = _day_start(_shift(today, _number(match[1]), match[2], -1))
        return TimeConstraint("within", match[0], start, _day_end(today), _day_end(today))
    match = _RELATIVE.search(query)
    if match is None:
        return None
    phrase = " ".join(match[1].lower().split())
    if phrase in ("today", "tonight", "this morning"):
        return _directed("in", _day_start(today), _day_end(today), match[0], _day_end(today))
    if phrase in ("yesterday", "last night", "the day before yesterday"):
        day = today - timedelta(days=2 if phrase.startswith("the day") else 1)
        return _directed("in", _day_start(day), _day_end(day), match[0])
    which, span = phrase.split()
    if span == "weekend":
        saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
        if which == "this" and today.weekday() >= 5:
            saturday = today - timedelta(days=today.weekday() - 5)
        return _directed(
            "in", _day_start(saturday), _day_end(saturday + timedelta(days=1)), match[0]
        )
    if span == "week":
        monday = today - timedelta(days=today.weekday())
        if which == "past":
            return _directed("in", _day_start(today - timedelta(days=7)), _day_end(today), match[0])
        first_day = monday - timedelta(days=7) if which in ("last", "previous") else monday
        return _directed(
            "in", _day_start(first_day), _day_end(first_day + timedelta(days=6)), match[0]
        )
    if span == "month":
        if which == "past":
            return _directed(
                "in", _day_start(today - timedelta(days=30)), _day_end(today), match[0]
            )
        first = today.replace(day=1)
        if which in ("last", "previous"):
            last = first - timedelta(days=1)
            return _directed("in", _day_start(last.replace(day=1)), _day_end(last), match[0])
        return _directed("in", _day_start(first), _day_end(today), match[0])
    if which == "past":
        return _directed("in", _day_start(today - timedelta(days=365)), _day_end(today), match[0])
    year = today.year - (which in ("last", "previous"))
    return _directed("in", _day_start(date(year, 1, 1)), _day_end(date(year, 12, 31)), match[0])


def _event(query: str) -> TimeConstraint | None:
    match = _EVENT.search(query)
    if match is None:
        return None
    kept: list[str] = []
    for word in re.findall(r"[\w'-]+", match[2]):
        bare = word.lower().removesuffix("'s")
        if bare in _EVENT_STOP or bare.isdigit():
            break
        kept.append(bare)
        if len(kept) == 3:
            break
    if not kept:
        return None
    word = " ".join(match[1].lower().split())
    direction = "before" if re.fullmatch(_BEFORE, word) else "after"
    return TimeConstraint(direction, match[0].strip(), event=" ".join(kept))
