package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonObject;

/**
 * A live broker as registered under {@code brokers/<id>}: where clients reach it, its rack, the
 * incarnation that registered (a fresh id per process start), and whether it is in a controlled
 * shutdown, during which it still serves but is given no leadership and leaves every ISR.
 */
public record BrokerInfo(
    int id, String host, int port, String rack, String incarnation, boolean shuttingDown) {
  BrokerInfo inShutdown() {
    return new BrokerInfo(id, host, port, rack, incarnation, true);
  }

  JsonObject toJson() {
    return new JsonObject()
        .put("id", id)
        .put("host", host)
        .put("port", port)
        .put("rack", rack)
        .put("incarnation", incarnation)
        .put("shuttingDown", shuttingDown);
  }

  static BrokerInfo fromJson(JsonObject json) {
    return new BrokerInfo(
        json.getInteger("id"),
        json.getString("host"),
        json.getInteger("port"),
        json.getString("rack"),
        json.getString("incarnation"),
        json.getBoolean("shuttingDown", false));
  }
}
