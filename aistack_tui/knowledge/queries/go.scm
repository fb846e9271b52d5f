(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name type: [
  (type_identifier) (qualified_type) (function_type) (map_type) (slice_type)
  (pointer_type) (channel_type) (array_type) (generic_type)]) @def.type

(call_expression function: (identifier) @ref)
(call_expression function: (selector_expression field: (field_identifier) @ref))
(type_identifier) @ref
(composite_literal type: (type_identifier) @ref)
