Feature: Variants: degrade, don't drop
  A file too large to keep whole often fits as its outline, and an outline tells a child more
  than nothing. Fragments sharing a variant_of are renderings of one thing (the full text, an
  outline, a summary): a compression keeps at most one of them.

  # --- the field is checked ------------------------------------------------------------------

  Scenario: A variant_of that is not a str is rejected
    Given the fragments
      | id | tokens | relevance | variant |
      | a  | 10     | 0.5       | 7       |
    When I compress with skeleton_budget 100
    Then a TypeError says "fragments[0] (id 'a'): variant_of must be None or a str, got 7 (int)"

  Scenario: An empty variant_of is rejected
    Given the fragments
      | id | tokens | relevance | variant |
      | a  | 10     | 0.5       | ""      |
    When I compress with skeleton_budget 100
    Then a ValueError says "fragments[0] (id 'a'): variant_of must be non-empty"

  Scenario: A group's members share one variant_of
    Given the fragments
      | id     | tokens | relevance | group | variant |
      | call   | 10     | 0.5       | tool  | x       |
      | note   | 10     | 0.5       |       |         |
      | result | 10     | 0.5       | tool  |         |
    When I compress with skeleton_budget 100
    Then a ValueError says "fragments[2] (id 'result'): variant_of None differs from 'x', the variant_of of fragments[0] in group 'tool': a group's members share one variant_of"

  Scenario: Two required units in one variant set are rejected
    Given the fragments
      | id | tokens | relevance | required | variant |
      | a  | 10     | 0.5       | yes      | f       |
      | b  | 10     | 0.5       |          | f       |
      | c  | 10     | 0.5       | yes      | f       |
    When I compress with skeleton_budget 100
    Then a ValueError says "fragments[2] (id 'c'): required, and so is fragments[0] of another unit with variant_of 'f': at most one unit of a variant set can be required"

  # --- at most one rendering --------------------------------------------------------------

  Scenario: With room for everything only one rendering of a thing is kept
    Given the fragments
      | id           | tokens | relevance | variant |
      | a.py         | 100    | 0.9       | a.py    |
      | a.py#outline | 20     | 0.6       | a.py    |
      | b.py         | 30     | 0.5       |         |
    When I compress with skeleton_budget 1000
    Then the kept fragments are "a.py, b.py"
    And compressed tokens are 130

  Scenario: Greedy keeps the outline of a file too large, and passes over a kept file's outline
    Given the fragments
      | id           | tokens | relevance | variant |
      | a.py         | 150    | 0.9       | a.py    |
      | a.py#outline | 20     | 0.6       | a.py    |
      | note         | 40     | 0.7       |         |
      | b.py         | 50     | 0.8       | b.py    |
      | b.py#outline | 10     | 0.5       | b.py    |
    When I explain with skeleton_budget 120
    Then the kept fragments are "b.py, note, a.py#outline"
    And compressed tokens are 110
    And the decisions are
      | id           | kept | reason       | rank | budget_left |
      | a.py         | no   | no_room      | 0    | 120         |
      | a.py#outline | yes  | fits         | 3    | 30          |
      | note         | yes  | fits         | 2    | 70          |
      | b.py         | yes  | fits         | 1    | 120         |
      | b.py#outline | no   | variant_kept | 4    | 10          |

  Scenario: Prefix does not stop at a rendering passed over
    Given the fragments
      | id           | tokens | relevance | variant |
      | a.py         | 30     | 0.9       | a.py    |
      | a.py#outline | 10     | 0.8       | a.py    |
      | b            | 20     | 0.7       |         |
      | c            | 60     | 0.6       |         |
      | d            | 5      | 0.5       |         |
    When I explain with skeleton_budget 60 and strategy=prefix
    Then the kept fragments are "a.py, b"
    And the decisions are
      | id           | kept | reason       | rank | budget_left |
      | a.py         | yes  | fits         | 0    | 60          |
      | a.py#outline | no   | variant_kept | 1    | 30          |
      | b            | yes  | fits         | 2    | 30          |
      | c            | no   | no_room      | 3    | 10          |
      | d            | no   | after_stop   | 4    |             |

  Scenario: A required rendering settles its set
    Given the fragments
      | id           | tokens | relevance | required | variant |
      | a.py         | 100    | 0.9       |          | a.py    |
      | a.py#outline | 10     | 0.3       | yes      | a.py    |
      | b            | 50     | 0.5       |          |         |
    When I explain with skeleton_budget 200
    Then the kept fragments are "b, a.py#outline"
    And the decisions are
      | id           | kept | reason       | rank | budget_left |
      | a.py         | no   | variant_kept | 0    |             |
      | a.py#outline | yes  | required     | 2    |             |
      | b            | yes  | fits         | 1    | 190         |

  # --- the strategies that choose by value ----------------------------------------------------

  Scenario Outline: The outline and two notes are worth more than the whole file
    # In 100 tokens: the file whole (80 tokens, 0.9) leaves room for nothing but its own
    # outline; its outline (15) and both notes (40 each) make 95 tokens and 1.9.
    Given the fragments
      | id           | tokens | relevance | variant |
      | a.py         | 80     | 0.9       | a.py    |
      | a.py#outline | 15     | 0.5       | a.py    |
      | b            | 40     | 0.7       |         |
      | c            | 40     | 0.7       |         |
    When I compress with skeleton_budget 100 and strategy=<strategy>
    Then the kept fragments are "<kept>"
    And the value kept is <value> of at most 1.930769230471924

    Examples:
      | strategy | kept               | value |
      | greedy   | a.py               | 0.9   |
      | prefix   | a.py               | 0.9   |
      | density  | b, c, a.py#outline | 1.9   |
      | optimal  | b, c, a.py#outline | 1.9   |

  Scenario Outline: Density and optimal tell a file left out for its outline
    # By density: the outline (0.05 a token), b (0.012), then the file (0.009), passed over.
    # The bound fills the outline, b, and 50 of the 90 tokens from outline to file (0.4 more).
    Given the fragments
      | id           | tokens | relevance | variant |
      | a.py         | 100    | 0.9       | a.py    |
      | a.py#outline | 10     | 0.5       | a.py    |
      | b            | 50     | 0.6       |         |
    When I explain with skeleton_budget 110 and strategy=<strategy>
    Then the kept fragments are "b, a.py#outline"
    And the value kept is 1.1 of at most 1.322222222108394
    And the decisions are
      | id           | kept | reason       | rank | budget_left |
      | a.py         | no   | variant_kept | 0    |             |
      | a.py#outline | yes  | chosen       | 2    |             |
      | b            | yes  | chosen       | 1    |             |

    Examples:
      | strategy |
      | density  |
      | optimal  |

  # --- everywhere a fragment goes ---------------------------------------------------------

  Scenario: Columns carry variant_of
    Given the fragments
      | id           | tokens | relevance | variant |
      | a.py         | 150    | 0.9       | a.py    |
      | a.py#outline | 20     | 0.6       | a.py    |
      | note         | 40     | 0.7       |         |
      | b.py         | 50     | 0.8       | b.py    |
      | b.py#outline | 10     | 0.5       | b.py    |
    When I compress the fragments as columns with variants and skeleton_budget 120
    Then the kept rows are 3, 2, 1

  Scenario: The command line reads variant_of from records
    Given the fragments
      | id           | tokens | relevance | variant |
      | a.py         | 150    | 0.9       | a.py    |
      | a.py#outline | 20     | 0.6       | a.py    |
      | note         | 40     | 0.7       |         |
      | b.py         | 50     | 0.8       | b.py    |
      | b.py#outline | 10     | 0.5       | b.py    |
    When I run the command line on the fragments as JSON Lines with --budget 120
    Then the command line prints the records of "b.py, note, a.py#outline" as they were written

  Scenario: A child plan inherits one rendering of its parent's file
    Given the fragments
      | id           | tokens | relevance | variant |
      | a.py         | 150    | 0.9       | a.py    |
      | a.py#outline | 20     | 0.6       | a.py    |
      | note         | 40     | 0.7       |         |
    When a plan with these fragments spawns a subplan with skeleton_budget 100
    Then the subplan's context is "note, a.py#outline"
    And the subplan's context as a dict has variant_of "a.py" for "a.py#outline" only

  Scenario: The renderings of one thing made from their texts
    Given the renderings of "a.py" counted in words
      | suffix   | content                | relevance |
      |          | def f(x): return x + 1 | 0.9       |
      | #outline | def f(x)               | 0.6       |
    When I compress with skeleton_budget 5
    Then the kept fragments are "a.py#outline"
    And the fragments made are
      | id           | tokens | relevance | variant |
      | a.py         | 6      | 0.9       | a.py    |
      | a.py#outline | 2      | 0.6       | a.py    |
