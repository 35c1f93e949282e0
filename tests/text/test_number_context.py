"""Numbers read by what is around them: a phone number digit by digit in groups, never a
range; a measure before the noun it describes as the adjective ("the five-kilogram
frame"); a four-digit number before a plural noun a count, after "in" a year (issue 31, item 4)."""

from __future__ import annotations

import pytest

from studio.text.normalize import spoken_form


@pytest.mark.parametrize("printed,said", [
    ("Call 555-0134 before noon.", "Call five five five, zero one three four before noon."),
    ("Dial 867-5309 tonight.", "Dial eight six seven, five three zero nine tonight."),
    ("Call (212) 555-0134 now.", "Call two one two, five five five, zero one three four now."),
    ("Call 212-555-0134.", "Call two one two, five five five, zero one three four."),
    ("Ring 020 7946 0018 for London.", "Ring zero two zero, seven nine four six, zero zero one eight for London."),
    ("Read pages 120-1200 twice.", "Read pages one hundred twenty to one thousand two hundred twice."),  # a range stays one
])
def test_phone_numbers_are_read_in_digit_groups_never_as_a_range(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


@pytest.mark.parametrize("printed,said", [
    ("Lift the 5 kg frame.", "Lift the five-kilogram frame."),
    ("Lift the 5-kg frame.", "Lift the five-kilogram frame."),
    ("It was a 3 km walk.", "It was a three-kilometer walk."),
    ("He carried a 20-pound sack.", "He carried a twenty-pound sack."),
    ("He weighed 5 kg.", "He weighed five kilograms."),
    ("He walked 5 km to town.", "He walked five kilometers to town."),
    ("It was the 5 km of road.", "It was the five kilometers of road."),
])
def test_a_measure_before_its_noun_is_an_adjective(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said


@pytest.mark.parametrize("printed,said", [
    ("The press printed 1984 copies.", "The press printed one thousand nine hundred eighty-four copies."),
    ("A run of 1984 copies sold out.", "A run of one thousand nine hundred eighty-four copies sold out."),
    ("In 1984 he left.", "In nineteen eighty-four he left."),
    ("In 1984 prices rose.", "In nineteen eighty-four prices rose."),
    ("The summer of 1066 was long.", "The summer of ten sixty-six was long."),
    ("The 1984 election was close.", "The nineteen eighty-four election was close."),
])
def test_a_count_before_its_noun_and_a_year_after_in(printed: str, said: str) -> None:
    assert spoken_form(printed, "en") == said
