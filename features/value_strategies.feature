Feature: Choosing by value
  Walking the ranking lets one large relevant fragment crowd out many small ones that together
  tell the child more. The `density` and `optimal` strategies choose by total relevance, and
  every result says how much relevance it kept (value_kept) and how much any selection within
  the budget could keep at most (value_bound).

  # --- what each strategy keeps -------------------------------------------------------------

  Scenario Outline: Many small fragments are worth more than one large relevant one
    Given the fragments
      | id  | tokens | relevance |
      | big | 100    | 0.875     |
      | s1  | 25     | 0.5       |
      | s2  | 25     | 0.5       |
      | s3  | 25     | 0.5       |
      | s4  | 25     | 0.5       |
    When I compress with skeleton_budget 100 and strategy=<strategy>
    Then the kept fragments are "<kept>"
    And the value kept is <value_kept> of at most 2.0

    Examples:
      | strategy | kept               | value_kept |
      | greedy   | big                | 0.875      |
      | prefix   | big                | 0.875      |
      | density  | s1, s2, s3, s4     | 2.0        |
      | optimal  | s1, s2, s3, s4     | 2.0        |

  Scenario Outline: Density keeps the best single fragment when it is worth more than its walk
    Given the fragments
      | id    | tokens | relevance |
      | tip   | 1      | 0.25      |
      | hint  | 1      | 0.25      |
      | whole | 64     | 1.0       |
    When I compress with skeleton_budget 64 and strategy=<strategy>
    Then the kept fragments are "whole"
    And the value kept is 1.0 of at most 1.46875

    Examples:
      | strategy |
      | density  |
      | optimal  |

  Scenario: Of two selections of equal value, optimal keeps the one of fewer tokens
    Given the fragments
      | id    | tokens | relevance |
      | large | 64     | 0.5       |
      | small | 32     | 0.5       |
    When I compress with skeleton_budget 64 and strategy=optimal
    Then the kept fragments are "small"
    And compressed tokens are 32

  Scenario: Optimal keeps nothing when nothing of value fits, and that is not an overflow
    Given the fragments
      | id   | tokens | relevance |
      | junk | 5      | 0.0       |
      | big  | 50     | 0.9       |
    When I compress with skeleton_budget 10 and strategy=optimal, on_overflow=raise
    Then the kept fragments are "nothing"

  Scenario Outline: When nothing fits, the overflow rules apply as for greedy
    Given the fragments
      | id | tokens | relevance |
      | a  | 50     | 0.9       |
      | b  | 30     | 0.5       |
    When I compress with skeleton_budget 10 and strategy=<strategy>, on_overflow=<policy>
    Then <outcome>

    Examples:
      | strategy | policy   | outcome                                     |
      | density  | keep_top | the kept fragments are "a" over budget      |
      | optimal  | keep_top | the kept fragments are "a" over budget      |
      | optimal  | strict   | the kept fragments are "nothing"            |
      | optimal  | raise    | a BudgetExceededError needs 30 tokens of 10 |

  Scenario: Required fragments are kept first and the rest is chosen by value
    Given the fragments
      | id   | tokens | relevance | required |
      | task | 40     | 0.1       | yes      |
      | big  | 60     | 0.9       |          |
      | a    | 30     | 0.5       |          |
      | b    | 30     | 0.5       |          |
    When I compress with skeleton_budget 100 and strategy=optimal
    Then the kept fragments are "a, b, task"

  # --- explanations -------------------------------------------------------------------------

  Scenario Outline: Explain says what was chosen, what fitted but was not, and what could not fit
    Given the fragments
      | id    | tokens | relevance | required |
      | task  | 10     | 0.05      | yes      |
      | huge  | 60     | 1.0       |          |
      | a     | 30     | 0.9       |          |
      | b     | 20     | 0.8       |          |
      | c     | 25     | 0.7       |          |
      | weak  | 5      | 0.05      |          |
    When I explain with skeleton_budget 60 and strategy=<strategy>, min_relevance=0.1
    Then the decisions are
      | id   | kept | reason              | rank | budget_left |
      | task | yes  | required            | 4    |             |
      | huge | no   | no_room             | 0    |             |
      | a    | yes  | chosen              | 1    |             |
      | b    | yes  | chosen              | 2    |             |
      | c    | no   | not_chosen          | 3    |             |
      | weak | no   | below_min_relevance | 5    |             |

    Examples:
      | strategy |
      | density  |
      | optimal  |

  # --- the value measures -------------------------------------------------------------------

  Scenario Outline: The value kept and its bound are in the metadata's dict, for every strategy
    Given the fragments
      | id    | tokens | relevance |
      | large | 64     | 0.5       |
      | small | 32     | 0.5       |
    When I compress with skeleton_budget 64 and strategy=<strategy>
    Then the metadata as a dict has value_kept 0.5 and value_bound 0.75

    Examples:
      | strategy |
      | greedy   |
      | prefix   |
      | density  |
      | optimal  |

  Scenario: The bound counts required fragments whole, and only what fits beside them
    Given the fragments
      | id   | tokens | relevance | required |
      | task | 40     | 0.25      | yes      |
      | a    | 40     | 0.5       |          |
    When I compress with skeleton_budget 60 and strategy=optimal
    Then the kept fragments are "task"
    And the value kept is 0.25 of at most 0.5
