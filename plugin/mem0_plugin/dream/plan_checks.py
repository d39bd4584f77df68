"""The plan file's schema, as pydantic models: what `mem0-dream --apply` accepts.

`plan_from_dict(data)` validates a decoded plan file against `PlanFile` and returns the
`Plan`; the first problem pydantic finds becomes one `PlanError` line naming the exact
field: ``plan: merges[2].similarity must be a number from 0 to 1``.

Each field type carries the sentence said when it is wrong (`_says`), so a wrong value
reads the same whatever pydantic found wrong with it (type, range, blank, duplicate).
Every key is required and no other key is allowed (a conflict's ``texts``, a supersede's
``text`` and the plan's ``supersedes``, ``candidates`` and ``synthesizes`` are optional: plans written
before them still read; so are a candidate's answer keys ``decision``, ``merged_text``, ``winner`` and
``text``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from ..errors import InvalidInputError, PlanError
from ..records import MAX_TEXT_CHARS
from ..timeutil import parse_timestamp
from .plan import (
    DECISIONS,
    PLAN_VERSION,
    PRUNE_REASONS,
    QUESTIONS,
    Candidate,
    ConflictAction,
    MergeAction,
    Plan,
    PruneAction,
    SupersedeAction,
    SynthesizeAction,
)
from .retention import POLICY_SOURCES

FIELD = "plan_field"  # an error about one field: "plan: <path> <message>"
WHOLE = "plan_whole"  # an error about the plan as a whole: "plan: <message>"


def _says(message: str) -> WrapValidator:
    """Whatever is wrong with the value inside, say `message` about its field."""

    def check(value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError(FIELD, message) from None

    return WrapValidator(check)


def _fails(message: str) -> PydanticCustomError:
    return PydanticCustomError(FIELD, message)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("blank")
    return value


def _distinct(ids: list[str]) -> list[str]:
    if len(set(ids)) != len(ids):
        raise ValueError("repeated id")
    return ids


def _no_nul(text: str) -> str:
    if "\x00" in text:
        raise _fails("must not contain a NUL character")
    return text


def _not_too_long(text: str) -> str:
    if len(text) > MAX_TEXT_CHARS:
        raise _fails(f"is longer than {MAX_TEXT_CHARS:,} characters")
    return text


def _timestamp(text: str) -> str:
    try:
        parse_timestamp(text)
    except InvalidInputError:
        raise _fails("must be an ISO-8601 timestamp") from None
    return text


def _supported_version(value: Any) -> int:
    if type(value) is not int or value != PLAN_VERSION:
        raise PydanticCustomError(
            WHOLE,
            "unsupported version {value} (this dream reads version {supported})",
            {"value": repr(value), "supported": PLAN_VERSION},
        )
    return value


def _memory_ids(size: int, *, exactly: bool = False) -> Any:
    count = f"exactly {size}" if exactly else f"at least {size}"
    return Annotated[
        list[Annotated[str, AfterValidator(_not_blank)]],
        Field(min_length=size, max_length=size if exactly else None),
        AfterValidator(_distinct),
        _says(f"must be a list of {count} distinct memory ids"),
    ]


Text = Annotated[str, AfterValidator(_not_blank), _says("must be a non-empty string")]
MemoryText = Annotated[Text, AfterValidator(_no_nul), AfterValidator(_not_too_long)]
Timestamp = Annotated[Text, AfterValidator(_timestamp)]
Count = Annotated[int, Field(ge=0), _says("must be a whole number, 0 or more")]
Fraction = Annotated[float, Field(ge=0, le=1)]
Days = Annotated[Annotated[int, Field(ge=0)] | None, _says("must be a whole number of days or null")]


def _one_of(options: tuple[str, ...]) -> Any:
    return Annotated[Literal[options], _says(f"must be one of {', '.join(options)}")]


if TYPE_CHECKING:  # what the checker sees; pydantic reads the annotated forms below
    MemoryIds = list[str]
    IdPair = list[str]
    PolicySource = str
    PruneReason = str
    Question = str
    Decision = str
else:
    MemoryIds = _memory_ids(2)
    IdPair = _memory_ids(2, exactly=True)
    PolicySource = _one_of(POLICY_SOURCES)
    PruneReason = _one_of(PRUNE_REASONS)
    Question = _one_of(QUESTIONS)
    Decision = _one_of(DECISIONS)


class _Strict(BaseModel):
    """Every key required, none other allowed, nothing coerced ("1" is not 1, 1.0 is not 1)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ConflictTexts(_Strict):
    A: str
    B: str


def _not_null(texts: ConflictTexts | None) -> ConflictTexts:
    if texts is None:
        raise ValueError("null")
    return texts


class MergeItem(_Strict):
    ids: MemoryIds
    type: Text
    merged_text: MemoryText
    confidence: Annotated[Fraction | None, _says("must be a number from 0 to 1 or null")]
    similarity: Annotated[Fraction, _says("must be a number from 0 to 1")]

    def action(self) -> MergeAction:
        return MergeAction(
            ids=tuple(self.ids),
            type=self.type,
            merged_text=self.merged_text,
            confidence=self.confidence,
            similarity=self.similarity,
        )


class ConflictItem(_Strict):
    ids: IdPair
    type: Text
    topic: Text
    likely_winner: Text
    # absent in older plans; present, it must be {"A": text, "B": text} (null is refused)
    texts: Annotated[ConflictTexts | None, AfterValidator(_not_null), _says('must be {"A": text, "B": text}')] = None

    @field_validator("likely_winner")
    @classmethod
    def _winner_is_a(cls, winner: str, info: ValidationInfo) -> str:
        ids = info.data.get("ids")
        if ids is not None and winner != ids[0]:
            raise _fails("must be the first of its ids (A)")
        return winner

    def action(self) -> ConflictAction:
        texts = (self.texts.A, self.texts.B) if self.texts is not None else None
        return ConflictAction(
            ids=(self.ids[0], self.ids[1]),
            type=self.type,
            topic=self.topic,
            likely_winner=self.likely_winner,
            texts=texts,
        )


class PruneItem(_Strict):
    id: Text
    type: Text
    age_days: Count
    reason: PruneReason
    confidence: Annotated[Fraction | None, AfterValidator(_not_null), _says("must be a number from 0 to 1")] = None

    def action(self) -> PruneAction:
        return PruneAction(
            id=self.id, type=self.type, age_days=self.age_days, reason=self.reason, confidence=self.confidence
        )


class SupersedeItem(_Strict):
    old: Text
    new: Text
    reason: Text
    text: Annotated[MemoryText | None, AfterValidator(_not_null), _says("must be a non-empty string")] = None

    @model_validator(mode="after")
    def _two_memories(self) -> SupersedeItem:
        if self.old == self.new:
            raise PydanticCustomError(FIELD, "must name two different memories (old and new)")
        return self

    def action(self) -> SupersedeAction:
        return SupersedeAction(old=self.old, new=self.new, reason=self.reason, text=self.text)


def _pattern_text(text: str) -> str:
    from .synthesis import MAX_PATTERN_CHARS

    if len(text) > MAX_PATTERN_CHARS:
        raise _fails(f"is longer than {MAX_PATTERN_CHARS} characters (a pattern is one or two sentences)")
    return text


PatternText = Annotated[MemoryText, AfterValidator(_pattern_text)]


class CandidateItem(_Strict):
    """A pair or a group put to a judge, with the judge's answer once given (docs/dream.md, "Candidates")."""

    ids: MemoryIds
    type: Text
    texts: Annotated[list[MemoryText], Field(min_length=2), _says("must be a list of texts, one per id")]
    similarity: Annotated[Fraction, _says("must be a number from 0 to 1")]
    question: Question
    decision: Decision | None = None
    merged_text: Annotated[MemoryText | None, AfterValidator(_not_null), _says("must be a non-empty string")] = None
    winner: Annotated[Text | None, AfterValidator(_not_null), _says("must be a non-empty string")] = None
    text: Annotated[MemoryText | None, AfterValidator(_not_null), _says("must be a non-empty string")] = None

    @model_validator(mode="after")
    def _answer_complete(self) -> CandidateItem:
        """A merge keeps every literal of both texts; a supersede names one of the two as winner;
        a synthesis writes a pattern that is none of its sources (docs/dream.md, "Synthesis")."""
        from .judging import lost_literal  # the text rules load only when a candidate is read

        self._shape()
        if self.merged_text is not None and self.decision != "merge":
            raise _fails("has a merged_text but its decision is not merge")
        if self.winner is not None and self.decision != "supersede":
            raise _fails("has a winner but its decision is not supersede")
        if self.text is not None and self.decision != "synthesize":
            raise _fails("has a text but its decision is not synthesize")
        if self.decision == "synthesize":
            self._synthesis_answer()
        if self.decision == "merge":
            if self.merged_text is None:
                raise _fails("decision merge needs a merged_text")
            lost = lost_literal(self.merged_text, self.texts)
            if lost is not None:
                raise _fails(f"merged_text drops {lost!r} of its texts (a merge keeps every literal)")
        if self.decision == "supersede" and self.winner not in self.ids:
            raise _fails("decision supersede needs a winner that is one of its ids")
        return self

    def _shape(self) -> None:
        """A pair for a pair's question, a group for a synthesis; answers that fit the question."""
        from .synthesis import MAX_GROUP, MIN_OBSERVATIONS

        if len(self.texts) != len(self.ids):
            raise _fails("texts must hold one text per id")
        if self.question == "synthesize":
            if not MIN_OBSERVATIONS <= len(self.ids) <= MAX_GROUP:
                raise _fails(f"ids of a synthesize question must be {MIN_OBSERVATIONS} to {MAX_GROUP} memory ids")
            if self.decision not in (None, "synthesize", "leave"):
                raise _fails("decision to a synthesize question must be synthesize or leave")
        else:
            if len(self.ids) != 2:
                raise _fails(f"ids of a {self.question} question must be exactly 2 memory ids")
            if self.decision == "synthesize":
                raise _fails("decision synthesize answers only a synthesize question")

    def _synthesis_answer(self) -> None:
        from .synthesis import MAX_PATTERN_CHARS, restates_a_source

        if self.text is None:
            raise _fails("decision synthesize needs a text (the pattern)")
        if len(self.text) > MAX_PATTERN_CHARS:
            raise _fails(f"text is longer than {MAX_PATTERN_CHARS} characters (a pattern is one or two sentences)")
        if restates_a_source(self.text, self.texts):
            raise _fails("text repeats one of its sources (a synthesis states the pattern they share)")

    def candidate(self) -> Candidate:
        return Candidate(
            ids=tuple(self.ids),
            type=self.type,
            texts=tuple(self.texts),
            similarity=self.similarity,
            question=self.question,
            decision=self.decision,
            merged_text=self.merged_text,
            winner=self.winner,
            text=self.text,
        )


class SynthesizeItem(_Strict):
    """An answered synthesis as the journal keeps it (docs/dream.md, "Synthesis")."""

    ids: MemoryIds
    type: Text
    text: PatternText
    similarity: Annotated[Fraction, _says("must be a number from 0 to 1")]

    def action(self) -> SynthesizeAction:
        return SynthesizeAction(ids=tuple(self.ids), type=self.type, text=self.text, similarity=self.similarity)


class PlanFile(_Strict):
    """The plan JSON that `plan_to_json` writes, key for key."""

    version: Annotated[int, PlainValidator(_supported_version)]
    user_id: Text
    project_id: Text
    generated_at: Timestamp
    policy: dict[str, Days]
    policy_source: PolicySource
    memory_count: Count
    merges: list[MergeItem]
    conflicts: list[ConflictItem]
    prunes: list[PruneItem]
    supersedes: list[SupersedeItem] = []  # absent in plans written before supersedes
    candidates: list[CandidateItem] = []  # absent in plans written before candidates
    synthesizes: list[SynthesizeItem] = []  # present only once a synthesis was answered
    fingerprints: dict[str, Annotated[str, _says("must be a string")]]

    @model_validator(mode="after")
    def _each_memory_once_with_a_fingerprint(self) -> PlanFile:
        """No memory in two actions; every memory an action names has a fingerprint (extra
        fingerprints are fine: deleting an action from the file is how an agent declines it)."""
        seen: set[str] = set()
        for memory_id in self.memory_ids():
            if memory_id in seen:
                raise PydanticCustomError(WHOLE, "memory {id} appears in more than one action", {"id": repr(memory_id)})
            seen.add(memory_id)
        for memory_id in [i for c in self.candidates for i in c.ids]:
            if memory_id in seen:
                raise PydanticCustomError(
                    WHOLE,
                    "memory {id} of a candidate appears in an action or another candidate",
                    {"id": repr(memory_id)},
                )
            seen.add(memory_id)
        missing = sorted(seen - set(self.fingerprints))
        if missing:
            raise PydanticCustomError(WHOLE, "fingerprints has no entry for memory {id}", {"id": repr(missing[0])})
        return self

    def memory_ids(self) -> list[str]:
        """Every memory id an action names, in plan order (as `Plan.memory_ids`)."""
        return (
            [i for m in self.merges for i in m.ids]
            + [i for c in self.conflicts for i in c.ids]
            + [p.id for p in self.prunes]
            + [i for s in self.supersedes for i in (s.old, s.new)]
            + [i for s in self.synthesizes for i in s.ids]
        )

    def plan(self) -> Plan:
        return Plan(
            version=self.version,
            user_id=self.user_id,
            project_id=self.project_id,
            generated_at=self.generated_at,
            policy=self.policy,
            policy_source=self.policy_source,
            memory_count=self.memory_count,
            merges=tuple(m.action() for m in self.merges),
            conflicts=tuple(c.action() for c in self.conflicts),
            prunes=tuple(p.action() for p in self.prunes),
            supersedes=tuple(s.action() for s in self.supersedes),
            candidates=tuple(c.candidate() for c in self.candidates),
            synthesizes=tuple(s.action() for s in self.synthesizes),
            fingerprints=self.fingerprints,
        )


def plan_from_dict(data: Any) -> Plan:
    """Validate the decoded JSON object of a plan file; any problem is a one-line `PlanError`."""
    try:
        return PlanFile.model_validate(data).plan()
    except ValidationError as exc:
        raise PlanError(describe(exc.errors(include_url=False)[0])) from None


def describe(error: ErrorDetails) -> str:
    """One pydantic error as the plan's one line, naming the field by its JSON path."""
    loc, kind = tuple(error["loc"]), error["type"]
    if kind == WHOLE:
        return f"plan: {error['msg']}"
    if kind == "model_type" and not loc:
        return f"plan must be a JSON object, got {_json_type(error['input'])}"
    if kind in ("missing", "extra_forbidden"):
        where = field_path(loc[:-1]) or "the plan"
        problem = "is missing" if kind == "missing" else "has unknown key"
        return f"plan: {where} {problem} {str(loc[-1])!r}"
    problem = {
        FIELD: error["msg"],
        "list_type": "must be a list",
        "dict_type": "must be an object",
        "model_type": f"must be an object, got {_json_type(error['input'])}",
    }.get(kind, error["msg"])
    return f"plan: {field_path(loc)} {problem}"


def field_path(loc: tuple[int | str, ...]) -> str:
    """``("merges", 2, "ids")`` → ``merges[2].ids``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
