Feature: Selection policy and explanations
  Planners pin what a child must see, keep a tool call with its result, keep weak context out
  even when there is room, may rather fail than go over budget, and want to know why each
  fragment was kept or dropped.

  # --- the new fields and options are checked ----------------------------------------------

  Scenario: A required flag that is not a bool is rejected
    Given the fragments
      | id | tokens | relevance | required |
      | a  | 10     | 0.5       | 1        |
    When I compress with skeleton_budget 100
    Then a TypeError says "fragments[0] (id 'a'): required must be a bool, got 1 (int)"

  Scenario: A group that is not a str is rejected
    Given the fragments
      | id | tokens | relevance | group |
      | a  | 10     | 0.5       | 7     |
    When I compress with skeleton_budget 100
    Then a TypeError says "fragments[0] (id 'a'): group must be None or a str, got 7 (int)"

  Scenario: An empty group is rejected
    Given the fragments
      | id | tokens | relevance | group |
      | a  | 10     | 0.5       | ""    |
    When I compress with skeleton_budget 100
    Then a ValueError says "fragments[0] (id 'a'): group must be non-empty"

  Scenario Outline: Bad options are rejected when the compressor is made
    When I make a compressor with <options>
    Then a <error> says "<message>"

    Examples:
      | options             | error      | message                                                      |
      | min_relevance=1.5   | ValueError | min_relevance must be in [0, 1], got 1.5                     |
      | min_relevance=-0.1  | ValueError | min_relevance must be in [0, 1], got -0.1                    |
      | min_relevance=true  | TypeError  | min_relevance must be a real number, got bool                |
      | on_overflow=panic   | ValueError | on_overflow must be one of keep_top, strict, raise, got 'panic' |
      | order=random        | ValueError | order must be one of ranking, input, edges, got 'random'     |

  # --- defaults -----------------------------------------------------------------------------

  Scenario: With every option at its default the plain compression is unchanged
    Given the fragments
      | id | tokens | relevance |
      | a  | 60     | 0.9       |
      | b  | 50     | 0.8       |
      | c  | 30     | 0.7       |
    When I compress with skeleton_budget 100
    Then the kept fragments are "a, c"

  # --- required fragments -------------------------------------------------------------------

  Scenario: Required fragments are kept first and sit at their rank
    Given the fragments
      | id   | tokens | relevance | required |
      | task | 40     | 0.1       | yes      |
      | a    | 50     | 0.9       |          |
      | b    | 30     | 0.8       |          |
    When I compress with skeleton_budget 90
    Then the kept fragments are "a, task"
    And compressed tokens are 90

  Scenario Outline: Required fragments over budget under each overflow policy
    Given the fragments
      | id   | tokens | relevance | required |
      | task | 40     | 0.1       | yes      |
      | spec | 30     | 0.2       | yes      |
      | a    | 5      | 0.9       |          |
    When I compress with skeleton_budget 50 and on_overflow=<policy>
    Then <outcome>

    Examples:
      | policy   | outcome                                                                  |
      | keep_top | the kept fragments are "spec, task" over budget                           |
      | strict   | a BudgetExceededError says "required fragments need 70 tokens, skeleton_budget is 50" |
      | raise    | a BudgetExceededError says "required fragments need 70 tokens, skeleton_budget is 50" |

  Scenario: A group is required when any member is
    Given the fragments
      | id     | tokens | relevance | required | group |
      | call   | 10     | 0.05      | yes      | tool  |
      | result | 20     | 0.05      |          | tool  |
      | a      | 10     | 0.9       |          |       |
    When I compress with skeleton_budget 40 and min_relevance=0.5
    Then the kept fragments are "a, call, result"

  Scenario: Budget 0 keeps a zero-token required fragment and nothing else
    Given the fragments
      | id   | tokens | relevance | required |
      | pin  | 0      | 0.1       | yes      |
      | free | 0      | 0.9       |          |
      | a    | 5      | 0.8       |          |
    When I compress with skeleton_budget 0
    Then the kept fragments are "pin"

  Scenario: Budget 0 keeps nothing without pins, zero-token fragments included
    Given the fragments
      | id   | tokens | relevance |
      | free | 0      | 0.9       |
    When I compress with skeleton_budget 0
    Then the kept fragments are "nothing"

  # --- groups -------------------------------------------------------------------------------

  Scenario: A group fits only whole
    Given the fragments
      | id     | tokens | relevance | group |
      | call   | 30     | 0.9       | tool  |
      | result | 50     | 0.4       | tool  |
      | note   | 40     | 0.6       |       |
    When I compress with skeleton_budget 70
    Then the kept fragments are "note"

  Scenario: A group ranks by its best member and keeps its members in input order
    Given the fragments
      | id     | tokens | relevance | group |
      | note   | 10     | 0.8       |       |
      | call   | 10     | 0.3       | tool  |
      | result | 10     | 0.95      | tool  |
    When I compress with skeleton_budget 100
    Then the kept fragments are "call, result, note"

  Scenario: Groups of equal relevance rank by their leads' ids
    Given the fragments
      | id | tokens | relevance | group |
      | z1 | 10     | 0.5       | g1    |
      | b1 | 10     | 0.5       | g1    |
      | c1 | 10     | 0.5       | g2    |
    When I compress with skeleton_budget 100
    Then the kept fragments are "z1, b1, c1"

  Scenario: A group whose best member is above the floor is kept with a member below it
    Given the fragments
      | id     | tokens | relevance | group |
      | call   | 10     | 0.9       | tool  |
      | result | 10     | 0.1       | tool  |
      | weak   | 10     | 0.2       |       |
    When I compress with skeleton_budget 100 and min_relevance=0.5
    Then the kept fragments are "call, result"

  Scenario: Prefix stops at a group that does not fit
    Given the fragments
      | id     | tokens | relevance | group |
      | a      | 10     | 0.9       |       |
      | call   | 30     | 0.8       | tool  |
      | result | 30     | 0.1       | tool  |
      | b      | 10     | 0.5       |       |
    When I compress with skeleton_budget 50 and strategy=prefix
    Then the kept fragments are "a"

  Scenario: Greedy skips a group that does not fit and goes on
    Given the fragments
      | id     | tokens | relevance | group |
      | a      | 10     | 0.9       |       |
      | call   | 30     | 0.8       | tool  |
      | result | 30     | 0.1       | tool  |
      | b      | 10     | 0.5       |       |
    When I compress with skeleton_budget 50
    Then the kept fragments are "a, b"

  # --- the floor ----------------------------------------------------------------------------

  Scenario: Fragments below the floor stay out even when there is room
    Given the fragments
      | id | tokens | relevance |
      | a  | 10     | 0.9       |
      | b  | 10     | 0.2       |
    When I compress with skeleton_budget 1000 and min_relevance=0.5
    Then the kept fragments are "a"

  # --- nothing fits -------------------------------------------------------------------------

  Scenario Outline: Nothing fits under each overflow policy
    Given the fragments
      | id | tokens | relevance |
      | a  | 50     | 0.9       |
      | b  | 30     | 0.5       |
    When I compress with skeleton_budget 10 and <options>
    Then <outcome>

    Examples:
      | options                             | outcome                                       |
      | on_overflow=keep_top                | the kept fragments are "a" over budget         |
      | on_overflow=strict                  | the kept fragments are "nothing"               |
      | on_overflow=raise                   | a BudgetExceededError needs 30 tokens of 10    |
      | on_overflow=raise, strategy=prefix  | a BudgetExceededError needs 50 tokens of 10    |

  Scenario: Only fragments below the floor: nothing is eligible, nothing is kept
    Given the fragments
      | id | tokens | relevance |
      | a  | 50     | 0.1       |
    When I compress with skeleton_budget 10 and min_relevance=0.5, on_overflow=raise
    Then the kept fragments are "nothing"

  # --- output order -------------------------------------------------------------------------

  Scenario: Input order keeps the kept fragments as they were passed
    Given the fragments
      | id | tokens | relevance |
      | c  | 10     | 0.2       |
      | a  | 10     | 0.9       |
      | b  | 10     | 0.5       |
    When I compress with skeleton_budget 100 and order=input
    Then the kept fragments are "c, a, b"

  Scenario Outline: Edges order puts the best units at both ends
    Given <count> fragments of falling relevance
    When I compress with skeleton_budget 1000 and order=edges
    Then the kept fragments are "<kept>"

    Examples:
      | count | kept                   |
      | 4     | u0, u2, u3, u1         |
      | 5     | u0, u2, u4, u3, u1     |
      | 1     | u0                     |

  Scenario: Edges order keeps a group's members together, in input order
    Given the fragments
      | id     | tokens | relevance | group |
      | a      | 10     | 0.9       |       |
      | result | 10     | 0.2       | tool  |
      | call   | 10     | 0.8       | tool  |
      | b      | 10     | 0.5       |       |
    When I compress with skeleton_budget 100 and order=edges
    Then the kept fragments are "a, b, result, call"

  # --- every budget of compress_many, and columns ------------------------------------------

  Scenario: compress_many applies the policy to every budget and raises on the first that raises
    Given the fragments
      | id   | tokens | relevance | required |
      | task | 40     | 0.1       | yes      |
      | a    | 10     | 0.9       |          |
    When I compress_many with skeleton_budgets 100, 45, 20, 10 and on_overflow=raise
    Then a BudgetExceededError says "required fragments need 40 tokens, skeleton_budget is 20"

  Scenario: Columns take required and groups
    Given the fragments
      | id     | tokens | relevance | required | group |
      | task   | 40     | 0.1       | yes      |       |
      | call   | 30     | 0.9       |          | tool  |
      | result | 30     | 0.2       |          | tool  |
      | a      | 10     | 0.5       |          |       |
    When I compress the fragments as columns with skeleton_budget 110
    Then the kept rows are 1, 2, 3, 0

  # --- explanations -------------------------------------------------------------------------

  Scenario: Explain gives every reason a walk can give
    Given the fragments
      | id     | tokens | relevance | required | group |
      | task   | 40     | 0.1       | yes      |       |
      | call   | 30     | 0.9       |          | tool  |
      | result | 30     | 0.3       |          | tool  |
      | big    | 50     | 0.8       |          |       |
      | a      | 20     | 0.6       |          |       |
      | weak   | 5      | 0.05      |          |       |
    When I explain with skeleton_budget 120 and min_relevance=0.1
    Then the decisions are
      | id     | kept | reason              | rank | budget_left |
      | task   | yes  | required            | 3    |             |
      | call   | yes  | fits                | 0    | 80          |
      | result | yes  | fits                | 0    | 80          |
      | big    | no   | no_room             | 1    | 20          |
      | a      | yes  | fits                | 2    | 20          |
      | weak   | no   | below_min_relevance | 4    |             |

  Scenario: Explain after a prefix stop
    Given the fragments
      | id | tokens | relevance |
      | a  | 10     | 0.9       |
      | b  | 50     | 0.8       |
      | c  | 10     | 0.7       |
    When I explain with skeleton_budget 30 and strategy=prefix
    Then the decisions are
      | id | kept | reason     | rank | budget_left |
      | a  | yes  | fits       | 0    | 30          |
      | b  | no   | no_room    | 1    | 20          |
      | c  | no   | after_stop | 2    |             |

  Scenario: Explain a top fragment kept over budget
    Given the fragments
      | id | tokens | relevance |
      | a  | 50     | 0.9       |
      | b  | 30     | 0.5       |
    When I explain with skeleton_budget 10
    Then the decisions are
      | id | kept | reason          | rank | budget_left |
      | a  | yes  | top_over_budget | 0    | 10          |
      | b  | no   | no_room         | 1    | 10          |

  Scenario: Explain a zero budget
    Given the fragments
      | id  | tokens | relevance | required |
      | pin | 0      | 0.1       | yes      |
      | a   | 0      | 0.9       |          |
    When I explain with skeleton_budget 0
    Then the decisions are
      | id  | kept | reason      | rank | budget_left |
      | pin | yes  | required    | 1    |             |
      | a   | no   | zero_budget | 0    |             |

  Scenario: Explain required fragments that alone overflow under keep_top
    Given the fragments
      | id   | tokens | relevance | required |
      | task | 40     | 0.1       | yes      |
      | a    | 10     | 0.9       |          |
    When I explain with skeleton_budget 30
    Then the decisions are
      | id   | kept | reason   | rank | budget_left |
      | task | yes  | required | 1    |             |
      | a    | no   | no_room  | 0    |             |

  Scenario: Explain raises what compress raises
    Given the fragments
      | id   | tokens | relevance | required |
      | task | 40     | 0.1       | yes      |
    When I explain with skeleton_budget 30 and on_overflow=strict
    Then a BudgetExceededError says "required fragments need 40 tokens, skeleton_budget is 30"

  Scenario: An explanation is JSON-ready, keyed by fragment_id
    Given the fragments
      | id | tokens | relevance |
      | a  | 10     | 0.9       |
      | b  | 50     | 0.5       |
    When I explain with skeleton_budget 30
    Then the explanation as a dict says "b" was not kept for "no_room" with 20 left
