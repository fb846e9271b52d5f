"""Skills: discovery from every location, validation errors, the catalogue, the Skill tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.skills import SkillRegistry, bundled_skills_dir, catalogue_text, skill_locations
from aistack_tui.skills.frontmatter import FrontMatterError, parse
from aistack_tui.tools.base import ToolContext, ToolError
from aistack_tui.tools.services import ToolServices
from aistack_tui.tools.skill import SkillTool

REPO_SKILLS = Path(__file__).resolve().parents[2] / "skills"


def make_skill(folder: Path, name: str, description: str, body: str = "Do it.",
               extra: str = "", dirname: str | None = None) -> Path:
    skill_dir = folder / (dirname or name)
    skill_dir.mkdir(parents=True, exist_ok=True)
    (skill_dir / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}\n"
    )
    return skill_dir


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    project, home, user = tmp_path / "proj", tmp_path / "aistack-home", tmp_path / "user-home"
    for p in (project, home, user):
        p.mkdir(exist_ok=True)
    return {"project": project, "home": home, "user": user}


def registry_for(places: dict[str, Path]) -> SkillRegistry:
    return SkillRegistry.discover(places["project"], places["home"], places["user"])


def test_discovery_from_every_location_later_ones_override(places: dict[str, Path]) -> None:
    project, home, user = places["project"], places["home"], places["user"]
    folders = {
        "user": home / "skills",
        "user .agents": user / ".agents" / "skills",
        "project .aistack": project / ".aistack" / "skills",
        "project .agents": project / ".agents" / "skills",
        "project .claude": project / ".claude" / "skills",
    }
    assert [label for label, _ in skill_locations(project, home, user)] == [
        "bundled", *folders
    ]
    for label, folder in folders.items():
        make_skill(folder, f"only-{label.replace(' .', '-')}", f"From {label}.")
        make_skill(folder, "shared", f"Shared, from {label}.")
    # A project skill replaces a bundled one of the same name.
    make_skill(folders["project .claude"], "review-diff", "Our own review rules.")

    registry = registry_for(places)
    assert registry.problems == []
    for label in folders:
        skill = registry.get(f"only-{label.replace(' .', '-')}")
        assert skill is not None
        assert skill.source == label
    shared = registry.get("shared")
    assert shared is not None
    assert shared.source == "project .claude"
    assert shared.description == "Shared, from project .claude."
    review = registry.get("review-diff")
    assert review is not None
    assert review.source == "project .claude"
    commit = registry.get("commit-message")
    assert commit is not None
    assert commit.source == "bundled"


def test_invalid_skill_files_are_reported_naming_file_and_line(places: dict[str, Path]) -> None:
    folder = places["project"] / ".claude" / "skills"
    for name, text in {
        "no-front-matter": "# Just markdown\n",
        "unclosed": "---\nname: unclosed\ndescription: x\n",
        "no-description": "---\nname: no-description\n---\nbody\n",
        "bad-name": "---\nname: Bad Name!\ndescription: x\n---\n",
        "bad-quote": '---\nname: bad-quote\ndescription: "never closed\n---\n',
        "garbage": "---\nname: garbage\nthis is not yaml\n---\n",
        "dupe": "---\nname: dupe\nname: again\ndescription: x\n---\n",
    }.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "SKILL.md").write_text(text)
    make_skill(folder, "fine", "Still loads.", extra="allowed-tools: Read, NotebookRead\n")
    (folder / "not-a-skill").mkdir()  # a folder without SKILL.md is ignored

    registry = registry_for(places)
    assert "fine" in registry.names()
    problems = "\n".join(registry.problems)
    base = folder
    assert f"{base / 'no-front-matter' / 'SKILL.md'}:1: SKILL.md must start with '---'" in problems
    assert f"{base / 'unclosed' / 'SKILL.md'}:1: the front matter has no closing '---'" in problems
    assert f"{base / 'no-description' / 'SKILL.md'}: missing 'description'" in problems
    assert f"{base / 'bad-name' / 'SKILL.md'}: invalid name 'Bad Name!'" in problems
    assert f"{base / 'bad-quote' / 'SKILL.md'}:3: unterminated \" string" in problems
    assert f"{base / 'garbage' / 'SKILL.md'}:3: expected 'key: value'" in problems
    assert f"{base / 'dupe' / 'SKILL.md'}:3: duplicate key 'name'" in problems
    assert "unknown tool 'NotebookRead' (rule ignored; the skill still loads)" in problems
    assert len(registry.problems) == 8
    fine = registry.get("fine")
    assert fine is not None
    assert fine.allowed_tools == ("Read",)


def test_front_matter_is_yaml_with_every_scalar_kept_as_text(tmp_path: Path) -> None:
    text = (
        "---\n"
        "# a comment\n"
        "name: 'it''s'\n"
        "description: >\n  Folded over\n  two lines.\n\n  New paragraph.\n"
        "notes: |\n  keep\n  lines\n"
        "allowed-tools:\n  - Read\n  - Bash(git diff:*)\n"
        "tags: [a, \"b c\"]\n"
        "metadata:\n  version: 1.10\n  author: \"Ann\"\n"
        "plain: value # trailing comment\n"
        "flag: no\n"
        "cmd: !!python/object/apply:os.system [touch pwned]\n"
        "---\n# Body\n\ntext\n"
    )
    doc = parse(text, tmp_path / "SKILL.md")
    assert doc.fields == {
        "name": "it's",
        # YAML's block scalars keep one final line break ("clip").
        "description": "Folded over two lines.\nNew paragraph.\n",
        "notes": "keep\nlines\n",
        "allowed-tools": ["Read", "Bash(git diff:*)"],
        "tags": ["a", "b c"],
        "metadata": {"version": "1.10", "author": "Ann"},
        "plain": "value",
        "flag": "no",
        "cmd": ["touch pwned"],  # tags are inert: only strings, lists and mappings
    }
    assert doc.body == "# Body\n\ntext"
    with pytest.raises(FrontMatterError, match=r"SKILL.md:2: unexpected indentation"):
        parse("---\n  name: x\n---\n", tmp_path / "SKILL.md")


def test_allowed_tools_flow_list_with_quoted_commas(places: dict[str, Path]) -> None:
    folder = places["project"] / ".claude" / "skills"
    make_skill(
        folder, "flow", '"Review a diff, then summarise: risks first."',
        extra='allowed-tools: ["Read, Grep", \'Bash(git log:*)\']\n',
    )
    make_skill(
        folder, "block", "'Block list, quoted.'",
        extra="allowed-tools:\n  - Read\n  - \"Bash(git diff:*)\"\n  - Glob, Grep\n",
    )
    registry = registry_for(places)
    assert registry.problems == []
    flow, block = registry.get("flow"), registry.get("block")
    assert flow is not None and block is not None
    assert flow.description == "Review a diff, then summarise: risks first."
    assert flow.allowed_tools == ("Read", "Grep", "Bash(git log:*)")
    assert block.description == "Block list, quoted."
    assert block.allowed_tools == ("Read", "Bash(git diff:*)", "Glob", "Grep")


@pytest.mark.parametrize(
    ("front", "where", "why"),
    [
        ('name: x\nallowed-tools: [Read, "Grep\n', ":3:", 'unterminated " string'),
        ("name: x\ntools: [Read, Grep\ndescription: y\n", ":3:", "unterminated [ list"),
        ("name: x\ndescription: Use it when: always\n", ":3:", "unexpected ':'; quote"),
        ("name: x\ndescription:\n\t- y\n", ":4:", "tabs are not allowed"),
        ("name: x\ndescription: y\n- z\n", ":4:", "invalid YAML"),
        ("- name\n- description\n", ":2:", "the front matter must be 'key: value' lines"),
        ("name: {a: b}\ndescription: y\n", ":2:", "'name' must be a non-empty string"),
        ("name: x\ndescription: [a]\n", ":3:", "'description' must be a non-empty string"),
        ("name: x\ndescription: y\nallowed-tools: {Read: yes}\n", ":4:",
         "'allowed-tools' must be a list of rules"),
        ("name: x\ndescription: y\nallowed-tools: [[Read]]\n", ":4:",
         "'allowed-tools' must be a list of rules"),
    ],
)
def test_malformed_front_matter_names_file_line_and_problem(
    places: dict[str, Path], front: str, where: str, why: str
) -> None:
    skill_md = places["home"] / "skills" / "x" / "SKILL.md"
    skill_md.parent.mkdir(parents=True)
    skill_md.write_text(f"---\n{front}---\nbody\n")
    registry = registry_for(places)
    assert registry.get("x") is None
    assert len(registry.problems) == 1
    assert registry.problems[0].startswith(f"{skill_md}{where} {why}")


def test_catalogue_has_names_and_descriptions_only(places: dict[str, Path]) -> None:
    folder = places["home"] / "skills"
    make_skill(folder, "deploy", "Deploy the app to staging.", body="SECRET BODY STEPS")
    registry = registry_for(places)
    text = registry.catalogue()
    assert text.startswith("<skills>\n")
    assert text.endswith("</skills>")
    assert "- deploy: Deploy the app to staging." in text
    assert "SECRET BODY STEPS" not in text  # the body is phase two
    assert catalogue_text([]) == ""


async def test_skill_tool_returns_body_and_other_files(places: dict[str, Path]) -> None:
    folder = places["project"] / ".aistack" / "skills"
    skill_dir = make_skill(
        folder, "release", "Cut a release.", body="# Release\n\n1. Read template.md.",
        extra="allowed-tools: Bash(git tag:*), Read\n",
    )
    (skill_dir / "template.md").write_text("notes")
    (skill_dir / "scripts").mkdir()
    (skill_dir / "scripts" / "bump.py").write_text("print(1)")
    (skill_dir / ".hidden").write_text("x")
    registry = registry_for(places)
    ctx = ToolContext(project_root=places["project"], cwd=places["project"],
                      home=places["user"], services=ToolServices(skills=registry))
    tool = SkillTool()
    assert tool.needs_permission is False
    assert tool.read_only is True
    assert tool.spec().input_schema["required"] == ["name"]

    assert registry.active_allowed_rules() == []
    out = await tool.run(tool.parse_args({"name": "release"}), ctx)
    assert isinstance(out.content, str)
    lines = out.content.splitlines()
    assert lines[0] == f'<skill name="release" path="{skill_dir / "SKILL.md"}">'
    assert "# Release\n\n1. Read template.md.\n</skill>" in out.content
    assert "name: release" not in out.content  # front matter stripped
    assert f"- {(skill_dir / 'scripts' / 'bump.py').resolve()}" in lines
    assert f"- {(skill_dir / 'template.md').resolve()}" in lines
    assert ".hidden" not in out.content
    assert registry.active == ["release"]
    assert registry.active_allowed_rules() == ["Bash(git tag:*)", "Read"]
    assert out.display is not None
    assert out.display.summary == "Skill release loaded (2 other files)"

    with pytest.raises(ToolError, match=r"No skill named 'nope'\. Available skills: .*release"):
        await tool.run(tool.parse_args({"name": "nope"}), ctx)
    bare = ToolContext(project_root=places["project"], cwd=places["project"],
                       home=places["user"])
    with pytest.raises(ToolError, match="No skills are available"):
        await tool.run(tool.parse_args({"name": "release"}), bare)
    registry.clear_active()
    assert registry.active_allowed_rules() == []


def test_bundled_skills_are_valid_and_useful() -> None:
    found = bundled_skills_dir()
    assert found is not None and found.resolve() == REPO_SKILLS.resolve()
    registry = SkillRegistry.discover(Path("/nonexistent/project"), Path("/nonexistent/home"),
                                      Path("/nonexistent/user"))
    assert registry.problems == []
    assert {"fix-failing-test", "review-diff", "commit-message"} <= set(registry.names())
    for name in registry.names():
        body = registry.load_body(name)
        assert len(body) > 800, name
        for path in registry.files(name):
            assert path.name in body, f"{name}: {path.name} is never mentioned"


def test_a_skill_with_a_long_description_loads_shortened_with_one_problem(
    places: dict[str, Path],
) -> None:
    # Anthropic's own claude-api skill has a 1,068-character description.
    words = ("Build apps with the Claude API or SDKs: when code imports anthropic, use this "
             "for prompting, tools, streaming and batches. ") * 10
    long = " ".join(words.split())[:1068]
    make_skill(places["project"] / ".claude" / "skills", "claude-api", f"\"{long}\"")
    registry = SkillRegistry.discover(places["project"], places["home"], places["user"])
    skill = registry.skills["claude-api"]
    assert len(skill.description) <= 1024 and skill.description.endswith("…")
    assert long.startswith(skill.description[:-1])
    [problem] = [p for p in registry.problems if "claude-api" in p]
    assert "1068 characters" in problem and "first 1024" in problem
