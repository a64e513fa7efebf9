package solrdev;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * Solr's date syntax: an ISO-8601 instant ending in Z, or NOW, followed by optional date math
 * such as "+1DAY", "-2MONTHS" or "/DAY" (rounding), evaluated in UTC as Solr does by default.
 */
final class DateMath {
  private DateMath() {}

  private static final DateTimeFormatter PARSER =
      new DateTimeFormatterBuilder().parseCaseInsensitive().appendInstant().toFormatter(Locale.ROOT);

  static Instant parse(String val, Instant now) {
    Instant base;
    String math;
    if (val.startsWith("NOW")) {
      base = now;
      math = val.substring(3);
    } else {
      int z = val.indexOf('Z');
      if (z < 0) throw SolrError.bad("Invalid Date String:'" + val + "'");
      try {
        base = PARSER.parse(val.substring(0, z + 1), Instant::from);
      } catch (DateTimeParseException e) {
        throw SolrError.bad("Invalid Date String:'" + val + "'");
      }
      math = val.substring(z + 1);
    }
    return math.isEmpty() ? base : apply(base, math, val);
  }

  private static Instant apply(Instant base, String math, String whole) {
    ZonedDateTime t = base.atZone(ZoneOffset.UTC);
    int i = 0;
    while (i < math.length()) {
      char op = math.charAt(i++);
      if (op == '/') {
        int start = i;
        while (i < math.length() && Character.isLetter(math.charAt(i))) i++;
        t = round(t, unit(math.substring(start, i), whole));
      } else if (op == '+' || op == '-') {
        int start = i;
        while (i < math.length() && Character.isDigit(math.charAt(i))) i++;
        if (start == i) throw bad(whole);
        long n = Long.parseLong(math.substring(start, i));
        int ustart = i;
        while (i < math.length() && Character.isLetter(math.charAt(i))) i++;
        t = t.plus(op == '+' ? n : -n, unit(math.substring(ustart, i), whole));
      } else {
        throw bad(whole);
      }
    }
    return t.toInstant();
  }

  private static SolrError bad(String whole) {
    return SolrError.bad("Invalid Date Math String:'" + whole + "'");
  }

  private static ChronoUnit unit(String u, String whole) {
    switch (u) {
      case "YEAR": case "YEARS": return ChronoUnit.YEARS;
      case "MONTH": case "MONTHS": return ChronoUnit.MONTHS;
      case "DAY": case "DAYS": case "DATE": return ChronoUnit.DAYS;
      case "HOUR": case "HOURS": return ChronoUnit.HOURS;
      case "MINUTE": case "MINUTES": return ChronoUnit.MINUTES;
      case "SECOND": case "SECONDS": return ChronoUnit.SECONDS;
      case "MILLI": case "MILLIS": case "MILLISECOND": case "MILLISECONDS": return ChronoUnit.MILLIS;
      default: throw bad(whole);
    }
  }

  private static ZonedDateTime round(ZonedDateTime t, ChronoUnit u) {
    switch (u) {
      case YEARS: return t.truncatedTo(ChronoUnit.DAYS).withDayOfYear(1);
      case MONTHS: return t.truncatedTo(ChronoUnit.DAYS).withDayOfMonth(1);
      default: return t.truncatedTo(u);
    }
  }
}
