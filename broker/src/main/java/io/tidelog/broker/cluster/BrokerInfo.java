package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonObject;

/**
 * A live broker as registered under {@code brokers/<id>}: where clients reach it, its rack, and the
 * incarnation that registered (a fresh id per process start).
 */
public record BrokerInfo(int id, String host, int port, String rack, String incarnation) {
  JsonObject toJson() {
    return new JsonObject()
        .put("id", id)
        .put("host", host)
        .put("port", port)
        .put("rack", rack)
        .put("incarnation", incarnation);
  }

  static BrokerInfo fromJson(JsonObject json) {
    return new BrokerInfo(
        json.getInteger("id"),
        json.getString("host"),
        json.getInteger("port"),
        json.getString("rack"),
        json.getString("incarnation"));
  }
}
