package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonObject;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAcl;

/**
 * How an ACL is stored, under {@code acls/<id>}: the fields of Kafka's {@link StandardAcl}
 * (resource type, name and pattern type, principal, host, operation, permission), as Kafka's
 * metadata log stores an {@code AccessControlEntryRecord}.
 */
final class AclRecord {
  static final String PREFIX = "acls/";

  private AclRecord() {}

  static String key(Uuid id) {
    return PREFIX + id;
  }

  static String toJson(StandardAcl acl) {
    return new JsonObject()
        .put("resourceType", acl.resourceType().name())
        .put("resourceName", acl.resourceName())
        .put("patternType", acl.patternType().name())
        .put("principal", acl.principal())
        .put("host", acl.host())
        .put("operation", acl.operation().name())
        .put("permissionType", acl.permissionType().name())
        .encode();
  }

  /**
   * @throws IllegalArgumentException when the value has another shape
   */
  static StandardAcl fromJson(String value) {
    JsonObject json = new JsonObject(value);
    return new StandardAcl(
        ResourceType.valueOf(json.getString("resourceType")),
        json.getString("resourceName"),
        PatternType.valueOf(json.getString("patternType")),
        json.getString("principal"),
        json.getString("host"),
        AclOperation.valueOf(json.getString("operation")),
        AclPermissionType.valueOf(json.getString("permissionType")));
  }
}
