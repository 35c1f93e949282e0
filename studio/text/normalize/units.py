"""Units after a number: SI and imperial, singular or plural ("1 km", "60 km/h", "20 °C").

Why only after a number: "m", "g", "in" and "s" are words or letters on their own; a
symbol is a unit only where a quantity stands before it.
"""

from __future__ import annotations

import re

#: symbol -> (singular, plural) in English (US spelling: the bundled voice is en_US)
EN: dict[str, tuple[str, str]] = {
    "km/h": ("kilometer per hour", "kilometers per hour"), "kph": ("kilometer per hour", "kilometers per hour"),
    "mph": ("mile per hour", "miles per hour"), "m/s": ("meter per second", "meters per second"),
    "km²": ("square kilometer", "square kilometers"), "m²": ("square meter", "square meters"),
    "sq ft": ("square foot", "square feet"), "sq mi": ("square mile", "square miles"), "m³": ("cubic meter", "cubic meters"),
    "°C": ("degree Celsius", "degrees Celsius"), "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
    "km": ("kilometer", "kilometers"), "cm": ("centimeter", "centimeters"), "mm": ("millimeter", "millimeters"),
    "m": ("meter", "meters"), "kg": ("kilogram", "kilograms"), "mg": ("milligram", "milligrams"), "g": ("gram", "grams"),
    "lbs": ("pound", "pounds"), "lb": ("pound", "pounds"), "oz": ("ounce", "ounces"), "ft": ("foot", "feet"),
    "mi": ("mile", "miles"), "yd": ("yard", "yards"), "yds": ("yard", "yards"), "in.": ("inch", "inches"),
    "ml": ("milliliter", "milliliters"), "mL": ("milliliter", "milliliters"), "L": ("liter", "liters"), "l": ("liter", "liters"),
    "gal": ("gallon", "gallons"), "ha": ("hectare", "hectares"), "kW": ("kilowatt", "kilowatts"), "MW": ("megawatt", "megawatts"),
    "kWh": ("kilowatt hour", "kilowatt hours"), "W": ("watt", "watts"), "V": ("volt", "volts"), "Hz": ("hertz", "hertz"),
    "kHz": ("kilohertz", "kilohertz"), "MHz": ("megahertz", "megahertz"), "GHz": ("gigahertz", "gigahertz"),
    "KB": ("kilobyte", "kilobytes"), "MB": ("megabyte", "megabytes"), "GB": ("gigabyte", "gigabytes"), "TB": ("terabyte", "terabytes"),
    "ms": ("millisecond", "milliseconds"), "sec": ("second", "seconds"), "min": ("minute", "minutes"),
    "hr": ("hour", "hours"), "hrs": ("hour", "hours"), "h": ("hour", "hours"), "kcal": ("kilocalorie", "kilocalories"),
    "cal": ("calorie", "calories"), "tbsp": ("tablespoon", "tablespoons"), "tsp": ("teaspoon", "teaspoons"), "mmHg": ("millimeter of mercury", "millimeters of mercury"), "dB": ("decibel", "decibels"),
    "°": ("degree", "degrees"),
}
#: the same for the other languages (one form: their plurals are mostly invariant or follow the number)
OTHER: dict[str, dict[str, str]] = {
    "de": {"km/h": "Kilometer pro Stunde", "km": "Kilometer", "cm": "Zentimeter", "mm": "Millimeter", "m": "Meter",
           "kg": "Kilogramm", "g": "Gramm", "l": "Liter", "ml": "Milliliter", "°C": "Grad Celsius", "°": "Grad",
           "m²": "Quadratmeter", "ha": "Hektar", "Std.": "Stunden", "Min.": "Minuten"},
    "fr": {"km/h": "kilomètres heure", "km": "kilomètres", "cm": "centimètres", "mm": "millimètres", "m": "mètres",
           "kg": "kilos", "g": "grammes", "l": "litres", "ml": "millilitres", "°C": "degrés Celsius", "°": "degrés",
           "m²": "mètres carrés", "ha": "hectares"},
    "es": {"km/h": "kilómetros por hora", "km": "kilómetros", "cm": "centímetros", "mm": "milímetros", "m": "metros",
           "kg": "kilos", "g": "gramos", "l": "litros", "ml": "mililitros", "°C": "grados centígrados", "°": "grados",
           "m²": "metros cuadrados", "ha": "hectáreas"},
    "it": {"km/h": "chilometri orari", "km": "chilometri", "cm": "centimetri", "mm": "millimetri", "m": "metri",
           "kg": "chili", "g": "grammi", "l": "litri", "ml": "millilitri", "°C": "gradi centigradi", "°": "gradi",
           "m²": "metri quadrati", "ha": "ettari"},
}
_SINGULAR_FR = {"kilomètres": "kilomètre", "mètres": "mètre", "kilos": "kilo", "litres": "litre", "degrés": "degré"}


def pattern(language: str) -> re.Pattern[str]:
    """A number (digits, separators, maybe a fraction already in words is not handled) then a unit."""
    table = EN if language == "en" else OTHER.get(language, {})
    symbols = sorted(table, key=len, reverse=True)
    alts = "|".join(re.escape(s) for s in symbols)
    number = r"\d+(?:[.,]\d+)*" if language == "en" else r"\d+(?:[.,\u00a0 ]\d+)*"
    return re.compile(rf"(?<![\w.,])(-?{number})(\s?|-)({alts})(?![\w²³/'’-])")


def unit_words(symbol: str, quantity: float, language: str) -> str:
    """``("km", 1)`` -> "kilometer"; ``("km", 2.5)`` -> "kilometers"."""
    if language == "en":
        one, many = EN[symbol]
        return one if quantity == 1 else many
    words = OTHER[language][symbol]
    if language == "fr" and abs(quantity) < 2:
        first, _, rest = words.partition(" ")
        words = " ".join(filter(None, [_SINGULAR_FR.get(first, first), rest]))
    return words
