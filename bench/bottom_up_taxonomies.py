"""Alternative Adult taxonomies for the bottom-up benchmark, shaped like the paper's Table 1.

Wang, Yu, Chakraborty (ICDM 2004), Section 6.1, used the 7 categorical attributes with the
hierarchies of Iyengar (KDD 2002), which are not published as files. Table 1 gives only their
shape (# leaf nodes / # levels, leaves and ANY included):

    Occupation 14/3, Education 16/5, Country 41/4, Marital status 7/3, Sex 2/2, Race 5/2,
    Work class 8/3.

The ANJANA CSVs in ``shared/datasets/adult-full/hierarchies`` differ where it matters: education
has 4 levels and its ``Primary School`` group (Preschool, 1st-4th, 5th-6th: 484 of the 30,162
rows) sits directly under ``*`` (its ``Primary education`` level repeats the same leaves), so
once K exceeds the rows of that group within any other attribute's value, either education or
that other attribute must go to ``*``; country has 3 levels; occupation's groups (Technical /
Nontechnical / Other) mix high- and low-income occupations.

``PAPER_LIKE`` below is *a plausible* set of semantic taxonomies with exactly the shape of
Table 1 (not Iyengar's, which we do not have). It is used only to show how much of the gap to the
paper's Figure 3 comes from the taxonomies: ``python bench/bottom_up_adult.py --taxonomies
paper-like`` (all seven) or ``--taxonomies anjana+education`` (only education replaced).

A tree is ``{label: subtree}`` with a leaf as ``label: None``; :func:`rows` pads each path right
after the leaf by repeating it (a single-child chain, collapsed by the search) so all rows have the
same length, as the hierarchy tables require.
"""

from __future__ import annotations

from sqlanon.hierarchy.model import Hierarchy

ANY = "*"

EDUCATION = {
    ANY: {
        "Without-Post-Secondary": {
            "Elementary": {
                "Primary": {"Preschool": None, "1st-4th": None, "5th-6th": None},
                "7th-8th": None,
            },
            "Secondary": {
                "Junior-Secondary": {"9th": None, "10th": None},
                "Senior-Secondary": {"11th": None, "12th": None},
                "HS-grad": None,
            },
        },
        "Post-Secondary": {
            "College": {
                "Some-college": None,
                "Associate": {"Assoc-acdm": None, "Assoc-voc": None},
            },
            "University": {
                "Bachelors": None,
                "Prof-school": None,
                "Grad-School": {"Masters": None, "Doctorate": None},
            },
        },
    }
}

OCCUPATION = {
    ANY: {
        "White-collar": {"Exec-managerial": None, "Prof-specialty": None, "Sales": None, "Adm-clerical": None, "Tech-support": None},
        "Blue-collar": {"Craft-repair": None, "Machine-op-inspct": None, "Handlers-cleaners": None, "Transport-moving": None, "Farming-fishing": None},
        "Service": {"Other-service": None, "Priv-house-serv": None, "Protective-serv": None, "Armed-Forces": None},
    }
}

COUNTRY = {
    ANY: {
        "America": {
            "North-America": {"United-States": None, "Canada": None, "Outlying-US(Guam-USVI-etc)": None},
            "Central-America-Caribbean": {
                "Mexico": None, "Cuba": None, "Jamaica": None, "Haiti": None, "Dominican-Republic": None,
                "Puerto-Rico": None, "El-Salvador": None, "Guatemala": None, "Honduras": None,
                "Nicaragua": None, "Trinadad&Tobago": None,
            },
            "South-America": {"Columbia": None, "Ecuador": None, "Peru": None},
        },
        "Asia": {
            "East-Asia": {"China": None, "Hong": None, "Japan": None, "Taiwan": None, "South": None},
            "South-East-Asia": {"Cambodia": None, "Laos": None, "Philippines": None, "Thailand": None, "Vietnam": None},
            "South-West-Asia": {"India": None, "Iran": None},
        },
        "Europe": {
            "Western-Europe": {"England": None, "Scotland": None, "Ireland": None, "France": None, "Germany": None, "Holand-Netherlands": None},
            "Southern-Europe": {"Italy": None, "Portugal": None, "Greece": None},
            "Eastern-Europe": {"Poland": None, "Hungary": None, "Yugoslavia": None},
        },
    }
}

MARITAL = {
    ANY: {
        "Married": {"Married-civ-spouse": None, "Married-AF-spouse": None, "Married-spouse-absent": None},
        "Was-married": {"Divorced": None, "Separated": None, "Widowed": None},
        "Never-married": None,
    }
}

WORKCLASS = {
    ANY: {
        "Private": None,
        "Self-employed": {"Self-emp-not-inc": None, "Self-emp-inc": None},
        "Government": {"Federal-gov": None, "State-gov": None, "Local-gov": None},
        "Unemployed": {"Without-pay": None, "Never-worked": None},
    }
}

RACE = {ANY: {"White": None, "Black": None, "Asian-Pac-Islander": None, "Amer-Indian-Eskimo": None, "Other": None}}
SEX = {ANY: {"Male": None, "Female": None}}

PAPER_LIKE = {
    "workclass": WORKCLASS,
    "education": EDUCATION,
    "marital-status": MARITAL,
    "occupation": OCCUPATION,
    "race": RACE,
    "sex": SEX,
    "native-country": COUNTRY,
}

# Table 1 of the paper: attribute -> (# leaf nodes, # levels)
TABLE1 = {
    "occupation": (14, 3),
    "education": (16, 5),
    "native-country": (41, 4),
    "marital-status": (7, 3),
    "sex": (2, 2),
    "race": (5, 2),
    "workclass": (8, 3),
}


def paths(tree: dict, above: tuple = ()) -> list[list[str]]:
    """Leaf-to-root paths of a tree (leaf first)."""
    out = []
    for label, sub in tree.items():
        if sub is None:
            out.append([label, *reversed(above)])
        else:
            out += paths(sub, above + (label,))
    return out


def levels(tree: dict) -> int:
    """Number of levels (leaves and root included) of the deepest path."""
    return max(len(p) for p in paths(tree))


def rows(tree: dict) -> list[list[str]]:
    """Hierarchy rows ``[leaf, ..., ANY]`` of equal length (short paths repeat their leaf)."""
    ps = paths(tree)
    width = max(len(p) for p in ps)
    return [[p[0]] * (width - len(p) + 1) + p[1:] for p in ps]


def _as_tree(node) -> dict:
    """A ``bench/_top_down_common.PAPER_TREES`` tree (leaves as list items or ``None``) as ``{label: subtree|None}``."""
    out = {}
    for label, sub in node.items():
        if sub is None:
            out[label] = None
        elif isinstance(sub, list):
            out[label] = {leaf: None for leaf in sub}
        else:
            out[label] = _as_tree(sub)
    return out


def tds_tree(column: str) -> dict:
    """The tree of ``column`` in the TDS authors' Adult file (Fung, Wang, Yu, ICDE 2005: the same
    7-attribute VID, which the file calls ``restrictive7``; see ``bench/_top_down_common.py``)."""
    from _top_down_common import PAPER_TREES

    return _as_tree(PAPER_TREES[column])


# The seven trees that agree with everything published about Iyengar's taxonomies: work class is
# Iyengar's Figure 1; marital status has the nodes Married / Was married / Never married (Iyengar,
# section 5); race and sex are flat (Table 1: 2 levels); education, occupation and native-country
# are the TDS authors' trees, whose shapes are exactly Table 1's (16/5, 14/3, 41/4); Wang's group
# had Iyengar's hierarchies ("obtained their hierarchies from the authors of [7]").
RECONSTRUCTED_FROM_TDS = ("education", "occupation", "native-country")


def tree_for(column: str, kind: str) -> dict:
    if kind == "tds" or (kind == "reconstructed" and column in RECONSTRUCTED_FROM_TDS):
        return tds_tree(column)
    return PAPER_LIKE[column]


def hierarchy(column: str, present: set[str] | None = None, kind: str = "paper-like") -> Hierarchy:
    tree = tree_for(column, kind)
    h = Hierarchy(attribute=column, rows=rows(tree), origin=f"bench/bottom_up_taxonomies.py:{kind}:{column}")
    missing = (present or set()) - set(h.leaves)
    if missing:
        raise SystemExit(f"{column}: values missing from the {kind} taxonomy: {sorted(missing)[:5]}")
    return h
