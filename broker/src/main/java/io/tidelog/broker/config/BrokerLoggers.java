package io.tidelog.broker.config;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configurator;

/**
 * The broker's log levels at run time, as Kafka's {@code BROKER_LOGGER} resources show and change
 * them ({@code kafka-configs --entity-type broker-loggers}): every logger the broker has made, and
 * {@value #ROOT}, with its level. A change lasts until the broker stops, as in Kafka. The loggers
 * that would log credentials keep the level {@code log4j2.properties} gives them.
 */
public final class BrokerLoggers {
  public static final String ROOT = "root";

  /** Kafka's valid levels, in its message's order. */
  private static final String LEVELS = "DEBUG, ERROR, FATAL, INFO, TRACE, WARN";

  /** Loggers kept off: Kafka's OAUTHBEARER validator logs each token it rejects, whole. */
  private static final Set<String> CREDENTIAL_LOGGERS =
      Set.of("org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler");

  private BrokerLoggers() {}

  private static LoggerContext context() {
    return (LoggerContext) LogManager.getContext(false);
  }

  /** Every logger and its effective level, by name; the root logger as {@value #ROOT}. */
  public static Map<String, String> levels() {
    LoggerContext context = context();
    Map<String, String> levels = new TreeMap<>();
    for (Logger logger : context.getLoggers()) {
      if (!logger.getName().isEmpty()) {
        levels.put(logger.getName(), logger.getLevel().name());
      }
    }
    context
        .getConfiguration()
        .getLoggers()
        .forEach(
            (name, config) -> {
              if (!name.isEmpty() && config.getLevel() != null) {
                levels.putIfAbsent(name, config.getLevel().name());
              }
            });
    levels.put(ROOT, context.getRootLogger().getLevel().name());
    return levels;
  }

  /**
   * Checks a SET of {@code logger} to {@code level}, as Kafka does; {@code loggers} are those the
   * broker has ({@link #levels()}).
   *
   * @throws InvalidConfigurationException for a level that is not one of Kafka's, or a logger the
   *     broker does not have
   * @throws InvalidRequestException for a logger that logs credentials
   */
  public static void checkSet(Set<String> loggers, String logger, String level) {
    if (level == null || !Set.of(LEVELS.split(", ")).contains(level)) {
      throw new InvalidConfigurationException(
          "Cannot set the log level of "
              + logger
              + " to "
              + level
              + " as it is not a supported log level. Valid log levels are "
              + LEVELS);
    }
    checkChangeable(loggers, logger);
  }

  /**
   * @throws InvalidConfigurationException for a logger the broker does not have, as in Kafka
   */
  private static void checkExists(Set<String> loggers, String logger) {
    if (!loggers.contains(logger)) {
      throw new InvalidConfigurationException("Logger " + logger + " does not exist!");
    }
  }

  /**
   * Checks a DELETE of {@code logger}'s level, as Kafka does; {@code loggers} are those the broker
   * has ({@link #levels()}).
   *
   * @throws InvalidRequestException for the root logger, and for one that logs credentials
   * @throws InvalidConfigurationException for a logger the broker does not have
   */
  public static void checkUnset(Set<String> loggers, String logger) {
    if (logger.equals(ROOT)) {
      throw new InvalidRequestException("Removing the log level of the root logger is not allowed");
    }
    checkChangeable(loggers, logger);
  }

  private static void checkChangeable(Set<String> loggers, String logger) {
    checkExists(loggers, logger);
    if (CREDENTIAL_LOGGERS.contains(logger)) {
      throw new InvalidRequestException(
          "The level of " + logger + " stays as configured: it would log credentials");
    }
  }

  /** Sets {@code logger}'s level, after {@link #checkSet}. */
  public static void set(String logger, String level) {
    if (logger.equals(ROOT)) {
      Configurator.setRootLevel(Level.valueOf(level));
    } else {
      Configurator.setLevel(logger, Level.valueOf(level));
    }
  }

  /** Lets {@code logger} take its parent's level again, after {@link #checkUnset}. */
  public static void unset(String logger) {
    Configurator.setLevel(logger, (Level) null);
  }
}
